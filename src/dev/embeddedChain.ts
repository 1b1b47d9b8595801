import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { PublicClient } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import type { Logger } from '../logger.ts'
import { saveAnvilState, startAnvil, type AnvilInstance } from './anvil.ts'
import { createChainClients, deployReferenceContracts } from './deploy.ts'
import { EMBEDDED_DEPLOYER_KEY, readClient, type ChainHandle } from '../adapters/chain/chain.ts'
import { readManifest, writeManifest } from '../adapters/chain/manifest.ts'
import { contractSourcesHash } from './artifacts/sources.hash.ts'

/**
 * Starts the embedded dev chain: anvil with its state under `<dataDir>/chain` (an atomic
 * snapshot every second while the chain moves, and on clean exit), the reference contracts
 * deployed on first start, or again when the state came back without them (or with other
 * sources). A chain at an RPC URL is `connectChain` (src/adapters/chain/chain.ts).
 *
 * @example
 * const chain = await startEmbeddedChain({ dataDir: '.data', logger })
 * chain.manifest.contracts.venueA
 */
export async function startEmbeddedChain({ dataDir, logger }: { dataDir: string; logger: Logger }): Promise<ChainHandle> {
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

async function hasCode(client: PublicClient, address: `0x${string}`): Promise<boolean> {
  const code = await client.getCode({ address }).catch(() => undefined)
  return !!code && code !== '0x'
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
