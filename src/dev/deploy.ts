/**
 * Deploys and seeds the reference venues on a (local) chain and returns the deployment manifest.
 * Deterministic: the same deployer nonce gives the same addresses and the same pools.
 */
import {
  type Account,
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hash,
  http,
  parseEther,
  parseUnits,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem'
import type { ChainLogger } from './anvil.ts'
import {
  AmmFactoryArtifact,
  AmmRouterArtifact,
  BondingCurveLaunchpadArtifact,
  contractSourcesHash,
  InstantPoolLauncherArtifact,
  MockUSDCArtifact,
  StockTokenArtifact,
  WETH9Artifact,
} from './artifacts/index.ts'
import type { z } from 'zod'
import { type DeploymentManifest, deploymentManifestSchema } from '../adapters/chain/manifest.ts'

/** A wallet client with its chain and account set, as the deploy routine signs with it. */
export type DeployWalletClient = WalletClient<Transport, Chain, Account>

export interface DeployOptions {
  walletClient: DeployWalletClient
  publicClient: PublicClient
  /** Receives the platform half of trade fees on both venues; default: the deployer. */
  platformFeeRecipient?: Address
  /** Logo URL of a stock token; default: a small inline SVG with the ticker. */
  stockLogoUrl?: (symbol: string) => string
  logger?: ChainLogger
}

/** Seeded reference prices and parameters (all integers in base units). */
export const SEED = {
  /** WETH/USDC pool: 100 WETH against 300,000 USDC, i.e. 1 ETH = 3,000 USDC. */
  wethUsdc: { weth: parseEther('100'), usdc: parseUnits('300000', 6) },
  /** Stock tokens, each in a USDC pool holding `shares` tokens at `priceUsdc` per token. */
  stocks: [
    { symbol: 'TSLAx', name: 'Tesla xStock', priceUsdc: parseUnits('350', 6), shares: parseEther('1000') },
    { symbol: 'NVDAx', name: 'NVIDIA xStock', priceUsdc: parseUnits('180', 6), shares: parseEther('1000') },
    { symbol: 'AAPLx', name: 'Apple xStock', priceUsdc: parseUnits('230', 6), shares: parseEther('1000') },
  ],
  /** venue-a curve parameters per quote asset: virtual reserve and graduation threshold (real reserve). */
  venueA: {
    ETH: { virtualReserve: parseEther('1.5'), graduationThreshold: parseEther('4') },
    USDC: { virtualReserve: parseUnits('4500', 6), graduationThreshold: parseUnits('12000', 6) },
  },
  /** venue-b minimum starting market cap per quote asset. */
  venueB: {
    ETH: { minStartingMarketCap: parseEther('0.1') },
    USDC: { minStartingMarketCap: parseUnits('300', 6) },
  },
} as const

/**
 * The venues may create launch pairs on the factory; their quote assets are ETH (as WETH) and
 * USDC, with the seed figures of SEED. Sent in this order (the deployment is deterministic).
 */
async function configureVenues({ walletClient, tx, factory, venueA, venueB, weth, usdc }: {
  walletClient: DeployOptions['walletClient']
  tx: ReturnType<typeof receiptWaiter>
  factory: Address
  venueA: Address
  venueB: Address
  weth: Address
  usdc: Address
}): Promise<void> {
  const factoryContract = { address: factory, abi: AmmFactoryArtifact.abi } as const
  await tx(await walletClient.writeContract({ ...factoryContract, functionName: 'setPoolDeployer', args: [venueA, true] }))
  await tx(await walletClient.writeContract({ ...factoryContract, functionName: 'setPoolDeployer', args: [venueB, true] }))
  for (const [quote, cfg] of [
    [weth, SEED.venueA.ETH],
    [usdc, SEED.venueA.USDC],
  ] as const) {
    await tx(
      await walletClient.writeContract({
        address: venueA,
        abi: BondingCurveLaunchpadArtifact.abi,
        functionName: 'setQuoteAsset',
        args: [quote, true, cfg.virtualReserve, cfg.graduationThreshold],
      }),
    )
  }
  for (const [quote, cfg] of [
    [weth, SEED.venueB.ETH],
    [usdc, SEED.venueB.USDC],
  ] as const) {
    await tx(
      await walletClient.writeContract({
        address: venueB,
        abi: InstantPoolLauncherArtifact.abi,
        functionName: 'setQuoteAsset',
        args: [quote, true, cfg.minStartingMarketCap],
      }),
    )
  }
}

/**
 * Deploys WETH, MockUSDC, the AMM (factory, router), venue-a (BondingCurveLaunchpad), venue-b
 * (InstantPoolLauncher + its FeeLocker) and the stock tokens, configures the venues' quote
 * assets (ETH via WETH, USDC), and seeds the WETH/USDC pool (3,000 USDC per ETH) and one USDC pool
 * per stock. About 30 transactions; the deployer needs ~101 ETH (anvil accounts hold 10,000).
 *
 * @example
 * const anvil = await startAnvil({ cachePath })
 * const { walletClient, publicClient } = createChainClients({ rpcUrl: anvil.rpcUrl, account })
 * const manifest = await deployReferenceContracts({ walletClient, publicClient })
 * await writeManifest(manifestPath, manifest)
 */
export async function deployReferenceContracts(opts: DeployOptions): Promise<DeploymentManifest> {
  const { walletClient, publicClient, logger } = opts
  const started = performance.now()
  const deployer = walletClient.account.address
  const platform = opts.platformFeeRecipient ?? deployer
  const chainId = await publicClient.getChainId()
  const tx = receiptWaiter(publicClient)
  const deployed = async (hash: Hash): Promise<Address> => {
    const receipt = await tx(hash)
    if (!receipt.contractAddress) throw new Error(`Deployment ${hash} created no contract`)
    return receipt.contractAddress
  }

  const firstHash = await walletClient.deployContract({ ...WETH9Artifact })
  const startBlock = Number((await tx(firstHash)).blockNumber)
  const weth = await deployed(firstHash)
  const usdc = await deployed(await walletClient.deployContract({ ...MockUSDCArtifact }))
  const factory = await deployed(await walletClient.deployContract({ ...AmmFactoryArtifact }))
  const router = await deployed(await walletClient.deployContract({ ...AmmRouterArtifact, args: [factory, weth] }))
  const venueA = await deployed(
    await walletClient.deployContract({ ...BondingCurveLaunchpadArtifact, args: [factory, weth, platform] }),
  )
  const venueB = await deployed(
    await walletClient.deployContract({ ...InstantPoolLauncherArtifact, args: [factory, platform] }),
  )
  const feeLocker = await publicClient.readContract({
    address: venueB,
    abi: InstantPoolLauncherArtifact.abi,
    functionName: 'feeLocker',
  })

  const factoryContract = { address: factory, abi: AmmFactoryArtifact.abi } as const
  await configureVenues({ walletClient, tx, factory, venueA, venueB, weth, usdc })

  // Liquidity: WETH/USDC, then one USDC pool per stock.
  const usdcNeeded = SEED.stocks.reduce(
    (sum, s) => sum + (s.shares * s.priceUsdc) / 10n ** 18n,
    SEED.wethUsdc.usdc,
  )
  const maxUint = 2n ** 256n - 1n
  await tx(await walletClient.writeContract({ address: usdc, abi: MockUSDCArtifact.abi, functionName: 'mint', args: [deployer, usdcNeeded] }))
  await tx(await walletClient.writeContract({ address: usdc, abi: MockUSDCArtifact.abi, functionName: 'approve', args: [router, maxUint] }))
  await tx(await walletClient.writeContract({ address: weth, abi: WETH9Artifact.abi, functionName: 'deposit', value: SEED.wethUsdc.weth }))
  await tx(await walletClient.writeContract({ address: weth, abi: WETH9Artifact.abi, functionName: 'approve', args: [router, maxUint] }))
  const addLiquidity = async (tokenA: Address, tokenB: Address, amountA: bigint, amountB: bigint) => {
    await tx(
      await walletClient.writeContract({
        address: router,
        abi: AmmRouterArtifact.abi,
        functionName: 'addLiquidity',
        args: [tokenA, tokenB, amountA, amountB, amountA, amountB, deployer, maxUint],
      }),
    )
    return publicClient.readContract({ ...factoryContract, functionName: 'getPair', args: [tokenA, tokenB] })
  }
  const wethUsdcPair = await addLiquidity(weth, usdc, SEED.wethUsdc.weth, SEED.wethUsdc.usdc)

  const stocks: z.input<typeof deploymentManifestSchema>['stocks'] = []
  for (const s of SEED.stocks) {
    const address = await deployed(await walletClient.deployContract({ ...StockTokenArtifact, args: [s.name, s.symbol] }))
    const stock = { address, abi: StockTokenArtifact.abi } as const
    await tx(await walletClient.writeContract({ ...stock, functionName: 'mint', args: [deployer, s.shares] }))
    await tx(await walletClient.writeContract({ ...stock, functionName: 'approve', args: [router, maxUint] }))
    const pair = await addLiquidity(address, usdc, s.shares, (s.shares * s.priceUsdc) / 10n ** 18n)
    stocks.push({
      symbol: s.symbol,
      name: s.name,
      address,
      logoUrl: (opts.stockLogoUrl ?? tickerLogo)(s.symbol),
      decimals: 18,
      pair,
      seedPriceUsdc: s.priceUsdc.toString(),
    })
  }

  const manifest = deploymentManifestSchema.parse({
    version: 1,
    chainId,
    startBlock,
    deployer,
    sourcesHash: contractSourcesHash,
    contracts: { weth, usdc, factory, router, venueA, venueB, feeLocker, wethUsdcPair },
    stocks,
    quoteAssets: {
      ETH: { address: weth, decimals: 18, native: true },
      USDC: { address: usdc, decimals: 6, native: false },
    },
    quotes: { 'venue-a': ['ETH', 'USDC'], 'venue-b': ['ETH', 'USDC'] },
  } satisfies z.input<typeof deploymentManifestSchema>)
  logger?.info(
    { chainId, contracts: manifest.contracts, ms: Math.round(performance.now() - started) },
    'reference contracts deployed',
  )
  return manifest
}

/**
 * Public and wallet clients for a local RPC (e.g. anvil), with a minimal chain definition.
 *
 * @example
 * const { publicClient, walletClient } = createChainClients({ rpcUrl: anvil.rpcUrl, account: privateKeyToAccount(key) })
 */
export function createChainClients({ rpcUrl, account, chainId = 31337 }: { rpcUrl: string; account: Account; chainId?: number }): {
  chain: Chain
  publicClient: PublicClient
  walletClient: DeployWalletClient
} {
  const chain = defineChain({
    id: chainId,
    name: `Local ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  })
  const transport = http(rpcUrl)
  return {
    chain,
    publicClient: createPublicClient({ chain, transport, pollingInterval: 50 }),
    walletClient: createWalletClient({ chain, transport, account, pollingInterval: 50 }),
  }
}

/** Waits for a receipt (polling fast: local chains mine in milliseconds) and checks its status. */
function receiptWaiter(publicClient: PublicClient) {
  return async (hash: Hash) => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 25 })
    if (receipt.status !== 'success') throw new Error(`Deployment transaction ${hash} reverted`)
    return receipt
  }
}

/** A 64x64 SVG badge with the ticker, as a data: URL (works offline). */
function tickerLogo(symbol: string): string {
  const text = symbol.replace(/x$/, '')
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">` +
    `<rect width="64" height="64" rx="32" fill="#111827"/>` +
    `<text x="32" y="38" font-family="sans-serif" font-size="16" font-weight="700" fill="#fff" text-anchor="middle">${text}</text>` +
    `</svg>`
  return `data:image/svg+xml,${encodeURIComponent(svg)}`
}
