import { formatEther, type LocalAccount, type TransactionReceipt } from 'viem'
import type { Logger } from '../../logger.ts'
import type { EffectHandler } from '../runtime/index.ts'
import type { WalletOpInput } from './walletOp.machine.ts'
import { ServiceError } from '../../domain/errors.ts'
import type { ChainHandle } from '../../adapters/chain/chain.ts'
import type { TxSender } from '../../adapters/chain/txSender.ts'
import type { PaperFiller, WalletOpPlanner } from '../../adapters/chain/walletOpPorts.ts'
import { createPriceReader } from '../../adapters/chain/priceReader.ts'
import { formatUsd } from '../../domain/tokens/priceMath.ts'

/** The transaction id of a paper fill: no transaction exists, and the prefix says so. */
export const PAPER_TX_PREFIX = 'paper:'

export type WalletOpsDeps = {
  /** Present: a paper agent's operations are filled by it, never sent. */
  paper?: PaperFiller | undefined
  chain: ChainHandle
  sender: TxSender
  loadAccount(agentId: string): Promise<LocalAccount>
  planners: Record<string, WalletOpPlanner>
  logger: Logger
  /** Below this much ETH left after a money move, `agent.low_balance` (LOW_BALANCE_ETH; default LOW_ETH_WEI). */
  lowEthWei?: bigint | undefined
}

const rejected = (code: string, message: string) => ({ type: 'op.rejected', error: { code, message } })

/**
 * The effects of the wallet operation machine (src/actors/walletOp/walletOp.machine.ts), the chain side
 * of an operation: sign and send its transactions through the wallet's outbox, then read their
 * receipts. Each is safe to run twice.
 */
export function createWalletOpEffects(deps: WalletOpsDeps): Record<string, EffectHandler> {
  const { chain, sender } = deps

  const planner = (kind: string) => {
    const p = deps.planners[kind]
    if (!p) throw new Error(`no planner for wallet operation ${kind}`)
    return p
  }

  return {
    async 'op.submit'(effect, effectCtx) {
      const ctx = await effectCtx.context<WalletOpInput>()
      // A paper agent's operation is filled against the pools at this block, never signed or sent.
      if (deps.paper && (await deps.paper.isPaper(ctx.agentId))) {
        const filled = await deps.paper.fill(ctx)
        return filled.ok ? { type: 'op.submitted', txHash: `${PAPER_TX_PREFIX}${ctx.opId}` } : rejected(filled.code, filled.message)
      }
      const account = await deps.loadAccount(ctx.agentId)
      try {
        const sent = await sender.send(
          { id: effect.id, accountId: ctx.accountId, agentId: ctx.agentId, effectId: effect.id, account },
          (firstNonce) => planner(ctx.kind).plan({ params: ctx.params, account, firstNonce, chain }),
        )
        return { type: 'op.submitted', txHash: sent.at(-1)!.hash }
      } catch (err) {
        if (err instanceof ServiceError && err.status < 500) return rejected(err.code, err.message)
        throw err
      }
    },

    async 'op.confirm'(effect, effectCtx) {
      const ctx = await effectCtx.context<WalletOpInput>()
      const txHash = (effect.params as { txHash: string }).txHash
      if (txHash.startsWith(PAPER_TX_PREFIX)) {
        const result = await deps.paper?.filled(ctx.opId)
        if (!result) throw new Error(`no paper fill recorded for operation ${ctx.opId}`)
        return { type: 'op.confirmed', result }
      }
      const account = await deps.loadAccount(ctx.agentId)
      const receipts = await sender.confirmRequest(txHash as `0x${string}`, account)
      const last = receipts.at(-1)!
      if (last.status !== 'success') {
        return rejected('transaction_reverted', `Transaction ${last.transactionHash} reverted on chain; nothing moved but gas.`)
      }
      const base = { txHash: last.transactionHash, gasUsed: receipts.reduce((s, r) => s + r.gasUsed, 0n).toString(), blockNumber: last.blockNumber.toString(), ...(await gasCost(chain, receipts)) }
      const extra = (await planner(ctx.kind).outcome?.({ params: ctx.params, account, receipts, chain })) ?? {}
      return { type: 'op.confirmed', result: { ...base, ...extra, ...(await lowBalance(chain, account.address, last.blockNumber, deps.lowEthWei ?? LOW_ETH_WEI)) } }
    },
  }
}

/**
 * What the operation's transactions paid for gas, in wei and in USD at the ETH price of the last
 * one's block (the PnL ledger counts it, src/domain/wallet/pnlRules.ts); `gasUsd` is left out
 * when that price cannot be read.
 */
export async function gasCost(chain: ChainHandle, receipts: readonly TransactionReceipt[]): Promise<{ gasWei: string; gasUsd?: string }> {
  const wei = receipts.reduce((s, r) => s + r.gasUsed * r.effectiveGasPrice, 0n)
  const eth = await createPriceReader(chain, receipts.at(-1)!.blockNumber).then((p) => p.quote('ETH')).catch(() => null)
  return eth ? { gasWei: wei.toString(), gasUsd: formatUsd((wei * eth.usd18) / 10n ** 18n) } : { gasWei: wei.toString() }
}

/** Below this much ETH left for gas after a money move, the owner is told (`agent.low_balance`), unless LOW_BALANCE_ETH says otherwise. */
export const LOW_ETH_WEI = 5_000_000_000_000_000n

/**
 * `lowBalance` when the wallet holds less than `threshold` wei at the operation's block (read at that
 * block, so a retried effect reports the same); the `agent.low_balance` event is written from it
 * with the operation's confirmation (Migration20261127230000_more_account_events.ts). Nothing
 * when the balance cannot be read.
 */
async function lowBalance(chain: ChainHandle, address: `0x${string}`, blockNumber: bigint, threshold: bigint): Promise<{ lowBalance?: { asset: 'ETH'; balance: string; threshold: string } }> {
  const wei = await chain.publicClient.getBalance({ address, blockNumber }).catch(() => null)
  if (wei === null || wei >= threshold) return {}
  return { lowBalance: { asset: 'ETH', balance: formatEther(wei), threshold: formatEther(threshold) } }
}
