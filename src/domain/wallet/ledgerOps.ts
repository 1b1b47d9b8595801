/* The confirmed operations of an agent as its ledger (cost basis, PnL) reads them. */

/** A confirmed swap of the agent, as the cost basis reads it (amounts in base units). */
export type SwapFill = { tokenIn?: string | undefined; tokenOut?: string | undefined; amountIn?: string | undefined; amountOut?: string | undefined; valueInUsd?: string | undefined }

/** A confirmed transfer out: token, base-unit amount and its USD value ("12.50"). */
export type TransferFill = { token: string; amount: string; valueUsd: string }

/** A transfer into the wallet (indexer): token, base-unit amount, its USD value at its block (null: no market there). */
export type ReceiveFill = { token: string; amount: string; valueUsd: string | null }

/** What a creator-fee claim paid, per token (base units), valued at its block (null: unpriced); `held`: it went to the agent's own wallet. */
export type ClaimFill = { claimed: Array<{ token: string; amount: string; valueUsd: string | null; held: boolean }> }

/**
 * A confirmed launch: the token created, its creator allocation (base units the launch delivered
 * to the wallet) and a self-funded launch's seed (the quote asset locked into its pool).
 */
export type LaunchFill = { token: string; allocation: string; seed: { token: string; amount: string } | null }

/** One confirmed operation of the agent, as the ledger reads them: oldest first (`at`: when it was recorded, or its block's time). */
export type LedgerOp = (({ kind: 'swap' } & SwapFill) | ({ kind: 'transfer' } & TransferFill) | ({ kind: 'receive' } & ReceiveFill) | ({ kind: 'claim' } & ClaimFill) | ({ kind: 'launch' } & LaunchFill)) & {
  at?: Date | undefined
  /** What its transactions paid for gas, in USD at the ETH price of their block ("0.31"). */
  gasUsd?: string | undefined
}
