import { createPublicClient, createWalletClient, defineChain, http, webSocket, type Chain, type PublicClient } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { readManifest, type DeploymentManifest } from './manifest.ts'

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

/**
 * Connects to the chain at an RPC URL: reads the deployment manifest and starts nothing (the
 * embedded dev chain is src/dev/embeddedChain.ts).
 *
 * @example
 * const chain = await connectChain({ rpcUrl: config.chain.rpcUrl, manifestPath: config.chain.manifestPath })
 * chain.manifest.contracts.venueA
 */
export async function connectChain({ rpcUrl, manifestPath }: { rpcUrl: string; manifestPath?: string | undefined }): Promise<ChainHandle> {
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
export function readClient(chain: Chain, rpcUrl: string, pollingInterval: number, { wsUrl }: { wsUrl?: string } = {}) {
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
