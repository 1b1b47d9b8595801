import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createPublicClient, createWalletClient, defineChain, http, webSocket, type Chain, type PublicClient } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import type { Logger } from '../../logger.ts'
import { saveAnvilState, startAnvil, type AnvilInstance } from '../../dev/anvil.ts'
import { createChainClients, deployReferenceContracts } from '../../dev/deploy.ts'
import { readManifest, writeManifest, type DeploymentManifest } from './manifest.ts'
import { contractSourcesHash } from '../../dev/artifacts/sources.hash.ts'

/**
 * anvil's first dev account. Public knowledge; used only on the embedded dev chain, where it
 * deploys the reference contracts and owns MockUSDC (the dev faucet mints with it).
 */
export const EMBEDDED_DEPLOYER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const

export type ChainHandle = {
  chain: Chain
  chainId: number
  rpcUrl: string
  /** True on the embedded anvil chain (dev faucet, zero whitelist hold). */
  embedded: boolean
  manifest: DeploymentManifest
  publicClient: PublicClient
  /** Embedded chain only: the state changed without a new block (`anvil_setBalance`); snapshot it soon. */
  stateChanged?: () => void
  stop(): Promise<void>
}

export function defineLocalChain(chainId: number, rpcUrl: string): Chain {
  return defineChain({
    id: chainId,
    name: chainId === 31337 ? 'Embedded anvil' : `Chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  })
}

async function hasCode(client: PublicClient, address: `0x${string}`): Promise<boolean> {
  const code = await client.getCode({ address }).catch(() => undefined)
  return !!code && code !== '0x'
}

/**
 * Connects to the chain. Without an RPC URL: starts anvil with its state under
 * `<dataDir>/chain` (an atomic snapshot every second while the chain moves, and on clean exit) and deploys the reference contracts
 * on first start, or again when the state came back without them (or with other sources).
 * With an RPC URL: reads the deployment manifest and starts nothing.
 *
 * @example
 * const chain = await startChain({ dataDir: '.data', logger })
 * chain.manifest.contracts.venueA
 */
export async function startChain({
  dataDir,
  rpcUrl,
  manifestPath,
  logger,
}: {
  dataDir: string
  rpcUrl?: string | undefined
  manifestPath?: string | undefined
  logger: Logger
}): Promise<ChainHandle> {
  if (rpcUrl) {
    if (!manifestPath) throw new Error('CHAIN_RPC_URL needs DEPLOYMENT_MANIFEST (written by `npm run -s admin -- deploy-contracts`).')
    const manifest = await readManifest(manifestPath)
    const chain = defineLocalChain(manifest.chainId, rpcUrl)
    const { client: publicClient, close } = readClient(chain, rpcUrl, 500, /^wss?:/.test(rpcUrl) ? { wsUrl: rpcUrl } : {})
    const actual = await publicClient.getChainId().catch(async (err) => {
      await close()
      throw err
    })
    if (actual !== manifest.chainId) {
      await close()
      throw new Error(`RPC chain id ${actual} does not match the manifest (${manifest.chainId})`)
    }
    return { chain, chainId: actual, rpcUrl, embedded: false, manifest, publicClient, stop: close }
  }

  const dir = join(dataDir, 'chain')
  mkdirSync(dir, { recursive: true })
  const statePath = join(dir, 'anvil-state.json')
  await stopLeftoverAnvil(join(dir, 'anvil.json'), statePath, logger)
  const anvil: AnvilInstance = await startAnvil({
    statePath,
    stateIntervalMs: 1000,
    cachePath: join(dir, 'cache'),
    logger,
  })
  // Operators (and crash tests) find the dev chain here; a restart stops a leftover one by its pid.
  const pidFile = join(dir, 'anvil.json')
  writeFileSync(pidFile, JSON.stringify({ pid: anvil.process.pid, rpcUrl: anvil.rpcUrl }))
  const deployer = privateKeyToAccount(EMBEDDED_DEPLOYER_KEY)
  const { chain, walletClient } = createChainClients({ rpcUrl: anvil.rpcUrl, account: deployer })
  const { client: publicClient, close: closeReads } = readClient(chain, anvil.rpcUrl, 50, { wsUrl: anvil.rpcUrl.replace(/^http/, 'ws') })
  try {
    const path = join(dir, 'manifest.json')
    let manifest = existsSync(path) ? await readManifest(path).catch(() => undefined) : undefined
    const usable =
      manifest &&
      manifest.sourcesHash === contractSourcesHash &&
      (await hasCode(publicClient, manifest.contracts.venueA)) &&
      (await hasCode(publicClient, manifest.contracts.venueB))
    if (!usable) {
      const t0 = performance.now()
      manifest = await deployReferenceContracts({ walletClient, publicClient, logger })
      await writeManifest(path, manifest)
      logger.info({ ms: Math.round(performance.now() - t0), path }, 'reference contracts deployed on the embedded chain')
    }
    return {
      chain,
      chainId: chain.id,
      rpcUrl: anvil.rpcUrl,
      embedded: true,
      stateChanged: anvil.stateChanged,
      manifest: manifest!,
      publicClient,
      stop: async () => {
        await closeReads()
        await anvil.stop()
        rmSync(pidFile, { force: true })
      },
    }
  } catch (err) {
    await closeReads()
    await anvil.stop()
    throw err
  }
}

/**
 * An anvil left running by a process that was killed (it runs in its own process group, so it outlives a SIGKILL of node) has
 * its state saved, then is stopped, before a new one loads the same file.
 */
async function stopLeftoverAnvil(pidFile: string, statePath: string, logger: Logger): Promise<void> {
  if (!existsSync(pidFile)) return
  let pid = 0
  let rpcUrl = ''
  try {
    const left = JSON.parse(readFileSync(pidFile, 'utf8')) as { pid?: unknown; rpcUrl?: unknown }
    pid = Number(left.pid)
    rpcUrl = String(left.rpcUrl ?? '')
  } catch {}
  const alive = (p: number) => {
    try {
      process.kill(p, 0)
      return true
    } catch {
      return false
    }
  }
  let cmd = ''
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  } catch {}
  if (Number.isInteger(pid) && pid > 0 && alive(pid) && cmd.includes('anvil')) {
    logger.warn({ pid }, 'an anvil from an earlier run is still up; saving its state and stopping it')
    await saveAnvilState(rpcUrl, statePath).catch((err) =>
      logger.error({ err }, 'could not save the state of the leftover anvil; its last snapshot is used'),
    )
    process.kill(pid, 'SIGTERM')
    const until = Date.now() + 15_000
    while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
    if (alive(pid)) process.kill(pid, 'SIGKILL')
  }
  rmSync(pidFile, { force: true })
}

/**
 * The service's read client. Reads issued in the same tick go out as one JSON-RPC batch: a
 * quote or a portfolio makes many independent view calls, and one HTTP round trip for all of
 * them is most of the latency saved.
 */
/**
 * The client every read (and raw broadcast) goes through. Over WebSocket where the node serves
 * it (the embedded anvil does, on its RPC port): one persistent connection, no HTTP request per
 * call. Measured here, one `eth_blockNumber` at a time: 0.23 ms over WebSocket, 1.1 ms over HTTP,
 * 2.7 ms over HTTP with viem's batching, whose `wait: 0` is a `setTimeout(0)` and so a 1 ms floor
 * on every call. A closed socket fails each request at once (503 `chain_unavailable` at the
 * edge) and is reopened every second while the node is away.
 */
function readClient(chain: Chain, rpcUrl: string, pollingInterval: number, { wsUrl }: { wsUrl?: string } = {}) {
  const transport = wsUrl
    ? webSocket(wsUrl, { reconnect: { attempts: Number.MAX_SAFE_INTEGER, delay: 1000 }, retryCount: 1 })
    : http(rpcUrl)
  const client = createPublicClient({ chain, transport, pollingInterval }) as PublicClient
  const close = async () => {
    if (!wsUrl) return
    const rpc = await (client.transport as unknown as { getRpcClient(): Promise<{ close(): void }> }).getRpcClient().catch(() => undefined)
    rpc?.close()
  }
  return { client, close }
}

/** A wallet client for one of our accounts (agent wallets, the embedded deployer). */
export function walletClientFor(chain: ChainHandle, privateKey: `0x${string}`) {
  // viem shares one socket per WebSocket URL.
  const transport = /^wss?:/.test(chain.rpcUrl) ? webSocket(chain.rpcUrl) : http(chain.rpcUrl)
  return createWalletClient({ chain: chain.chain, transport, account: privateKeyToAccount(privateKey) })
}
