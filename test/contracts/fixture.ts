/**
 * Shared set-up for the contract tests: one anvil per test file (temp cache dir), the reference
 * deployment, named wallets, and helpers for receipts, events and revert reasons.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  type Abi,
  type Address,
  BaseError,
  type ContractEventName,
  ContractFunctionRevertedError,
  createTestClient,
  type Hash,
  http,
  type Log,
  parseEventLogs,
  type ParseEventLogsReturnType,
  type PublicClient,
  type TransactionReceipt,
} from 'viem'
import { mnemonicToAccount } from 'viem/accounts'
import { type AnvilInstance, startAnvil } from '../../src/dev/anvil.ts'
import { createChainClients, deployReferenceContracts, type DeployWalletClient } from '../../src/dev/deploy.ts'
import type { DeploymentManifest } from '../../src/adapters/chain/manifest.ts'

/** anvil's default, publicly known test mnemonic. */
const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk'
const ROLES = ['deployer', 'platform', 'creator', 'trader', 'other'] as const
export type Role = (typeof ROLES)[number]

export const MAX_UINT = 2n ** 256n - 1n
export const DEAD: Address = '0x000000000000000000000000000000000000dEaD'

export interface ChainFixture {
  anvil: AnvilInstance
  dir: string
  manifest: DeploymentManifest
  publicClient: PublicClient
  wallets: Record<Role, DeployWalletClient>
  addr: Record<Role, Address>
  /** Waits for a transaction and asserts it succeeded. */
  mined(hash: Hash | Promise<Hash>): Promise<TransactionReceipt>
  /** Takes an anvil snapshot; the returned function reverts to it. */
  snapshot(): Promise<() => Promise<void>>
  /** Stops anvil and removes the temp dir. */
  close(): Promise<void>
}

/**
 * Starts anvil, deploys the reference contracts with `deployer` and returns the fixture.
 * `platform` is the platform fee recipient.
 */
export async function setupChain(): Promise<ChainFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'contracts-test-'))
  const anvil = await startAnvil({ cachePath: join(dir, 'anvil-cache') })
  const clients = ROLES.map((role, addressIndex) =>
    createChainClients({ rpcUrl: anvil.rpcUrl, account: mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex }) }),
  )
  const publicClient = clients[0]!.publicClient
  const wallets = Object.fromEntries(ROLES.map((r, i) => [r, clients[i]!.walletClient])) as Record<Role, DeployWalletClient>
  const addr = Object.fromEntries(ROLES.map((r) => [r, wallets[r].account.address])) as Record<Role, Address>
  const manifest = await deployReferenceContracts({
    walletClient: wallets.deployer,
    publicClient,
    platformFeeRecipient: addr.platform,
  })
  const testClient = createTestClient({ mode: 'anvil', transport: http(anvil.rpcUrl) })

  return {
    anvil,
    dir,
    manifest,
    publicClient,
    wallets,
    addr,
    async mined(hash) {
      const receipt = await publicClient.waitForTransactionReceipt({ hash: await hash, pollingInterval: 25 })
      if (receipt.status !== 'success') throw new Error(`transaction ${receipt.transactionHash} reverted`)
      return receipt
    },
    async snapshot() {
      const id = await testClient.snapshot()
      return async () => {
        await testClient.revert({ id })
      }
    },
    async close() {
      await anvil.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/**
 * The revert reason (Error(string)) a contract call, simulation or deployment failed with, as
 * viem decodes it; throws if the call did not revert with a reason.
 */
export async function revertReason(call: Promise<unknown>): Promise<string> {
  try {
    await call
  } catch (err) {
    if (err instanceof BaseError) {
      const revert = err.walk((e) => e instanceof ContractFunctionRevertedError)
      if (revert instanceof ContractFunctionRevertedError && revert.reason) return revert.reason
      // Deployments (no function ABI): the node's message is "execution reverted: <reason>".
      const node = err.walk((e) => e instanceof BaseError && /^execution reverted: /.test(e.details))
      if (node instanceof BaseError) return node.details.replace(/^execution reverted: /, '')
    }
    throw err
  }
  throw new Error('expected the call to revert, but it succeeded')
}

/** Decoded args of the single `eventName` log (optionally emitted by `address`) in a receipt. */
export function eventArgs<const abi extends Abi, const name extends ContractEventName<abi>>(
  receipt: { logs: Log[] },
  abi: abi,
  eventName: name,
  address?: Address,
): ParseEventLogsReturnType<abi, name, true>[number]['args'] {
  const logs = parseEventLogs({ abi, logs: receipt.logs, eventName }).filter(
    (l) => !address || l.address.toLowerCase() === address.toLowerCase(),
  )
  if (logs.length !== 1) throw new Error(`expected one ${eventName} event, got ${logs.length}`)
  return logs[0]!.args
}
