import type { LocalAccount, TransactionReceipt } from 'viem'
import type { ChainHandle } from './chain.ts'
import type { PlannedTx } from './txSender.ts'

/** What a paper fill reads of a wallet operation (src/actors/walletOp/walletOp.machine.ts, `WalletOpInput`). */
export type PaperFillInput = { opId: string; accountId: string; agentId: string; kind: string; params: Record<string, unknown> }

/**
 * What a kind of wallet operation contributes: its transactions for the wallet's next nonce,
 * and what the receipts mean (e.g. the amount a swap actually received).
 */
export type WalletOpPlanner = {
  plan(input: { params: Record<string, unknown>; account: LocalAccount; firstNonce: number; chain: ChainHandle }): PlannedTx[]
  outcome?(input: {
    params: Record<string, unknown>
    account: LocalAccount
    receipts: TransactionReceipt[]
    chain: ChainHandle
  }): Promise<Record<string, unknown>>
}

/**
 * A paper agent's side of wallet operations (src/adapters/chain/paperFills.ts): a simulated fill
 * into its virtual ledger instead of a transaction (docs/api.md, "Paper agents").
 */
export type PaperFiller = {
  isPaper(agentId: string): Promise<boolean>
  /** Fills the operation once (a retry answers the first fill), or says why not with a real operation's code. */
  fill(op: PaperFillInput): Promise<{ ok: true; result: Record<string, unknown> } | { ok: false; code: string; message: string }>
  /** The fill recorded for an operation. */
  filled(opId: string): Promise<Record<string, unknown> | undefined>
}
