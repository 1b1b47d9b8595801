/**
 * The deployment manifest: where the reference contracts live on a chain, written by
 * `deployReferenceContracts` and read by the service at start-up.
 */
import { mkdir, readFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { getAddress, isAddress, type Address } from 'viem'
import { z } from 'zod'
import { writeFileAtomic } from '../../domain/util/atomicFile.ts'

/** Any-case 0x address, normalized to its EIP-55 checksum form. */
const address = z
  .string()
  .refine((v) => isAddress(v, { strict: false }), { message: 'must be a 0x-prefixed 20-byte hex address' })
  .transform((v): Address => getAddress(v))

/** Non-negative integer amount in base units, as a decimal string (JSON has no bigint). */
const baseUnits = z.string().regex(/^(0|[1-9]\d*)$/, 'must be a non-negative integer string (base units)')

const venueId = z.enum(['venue-a', 'venue-b'])
export type VenueId = z.infer<typeof venueId>

export const quoteAssetSchema = z.object({
  /** Token address (WETH for ETH). */
  address,
  decimals: z.number().int().min(0).max(36),
  /** True for ETH: held and traded as WETH, but users may pay/receive native ETH. */
  native: z.boolean(),
})

export const stockSchema = z.object({
  symbol: z.string().min(1),
  name: z.string().min(1),
  address,
  logoUrl: z.string().regex(/^(https?:|data:image\/)/, 'must be an http(s) or data:image URL'),
  decimals: z.number().int().min(0).max(36),
  /** Its USDC pool. */
  pair: address,
  /** Price the pool was seeded at, in USDC base units per whole token. */
  seedPriceUsdc: baseUnits,
})

export const deploymentManifestSchema = z
  .object({
    version: z.literal(1),
    chainId: z.number().int().positive(),
    /** Block of the first deployment transaction: indexers start here. */
    startBlock: z.number().int().nonnegative(),
    deployer: address,
    /** `contractSourcesHash` of the artifacts that were deployed; a mismatch means redeploy. */
    sourcesHash: z.string().regex(/^[0-9a-f]{64}$/),
    contracts: z.object({
      weth: address,
      usdc: address,
      factory: address,
      router: address,
      /** BondingCurveLaunchpad. */
      venueA: address,
      /** InstantPoolLauncher. */
      venueB: address,
      /** venue-b's FeeLocker (LP tokens and creator fees). */
      feeLocker: address,
      /** The WETH/USDC pool. */
      wethUsdcPair: address,
    }),
    stocks: z.array(stockSchema),
    /** Quote assets by symbol (e.g. ETH, USDC). */
    quoteAssets: z.record(z.string().min(1), quoteAssetSchema),
    /** Symbols of the quote assets each venue accepts. */
    quotes: z.record(venueId, z.array(z.string().min(1))),
  })
  .superRefine((m, ctx) => {
    for (const [venue, symbols] of Object.entries(m.quotes)) {
      for (const symbol of symbols) {
        if (!(symbol in m.quoteAssets)) {
          ctx.addIssue({ code: 'custom', path: ['quotes', venue], message: `unknown quote asset ${symbol}` })
        }
      }
    }
  })

/** Parsed manifest (addresses checksummed). */
export type DeploymentManifest = z.output<typeof deploymentManifestSchema>

/**
 * Reads and validates a manifest file. Throws naming the file and every invalid field.
 *
 * @example
 * const manifest = await readManifest(join(dataDir, 'deployment.json'))
 * manifest.contracts.router
 */
export async function readManifest(path: string): Promise<DeploymentManifest> {
  const text = await readFile(path, 'utf8')
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw new Error(`Deployment manifest ${path} is not valid JSON`, { cause: err })
  }
  const parsed = deploymentManifestSchema.safeParse(json)
  if (!parsed.success) throw new Error(`Deployment manifest ${path} is invalid:\n${z.prettifyError(parsed.error)}`)
  return parsed.data
}

/**
 * Validates and writes a manifest atomically (temp file, fsync, rename), creating the directory.
 *
 * @example
 * await writeManifest(join(dataDir, 'deployment.json'), await deployReferenceContracts(clients))
 */
export async function writeManifest(path: string, manifest: DeploymentManifest): Promise<void> {
  const valid = deploymentManifestSchema.parse(manifest)
  await mkdir(dirname(path), { recursive: true })
  await writeFileAtomic(path, `${JSON.stringify(valid, null, 2)}\n`, { mode: 0o644 })
}
