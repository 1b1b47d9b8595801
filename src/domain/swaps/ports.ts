import type { PolicyGate, PolicyStamp } from '../policies/ports.ts'
import type { PolicyDecision } from '../policies/ownerPolicyRules.ts'
import type { PaperPoolState } from '../paper/paperPool.ts'
import type { Address } from 'viem'
import type { Policy } from '../agents/policy.ts'
import type { PricedRoute, SwapRoute } from './swap.types.ts'
import type { SimulatedCall, SwapParams, SwapTokenInfo } from './swap.types.ts'
import type { PlannedTx } from './swap.types.ts'
import type { ApprovalRequest } from '../approvals/approval.types.ts'

/**
 * What the swap use cases need from outside. Adapters (src/adapters/chain/swapAdapters.ts and
 * src/adapters/db/swapQuote.store.ts) implement these and src/app/core.ts hands them in; a unit test can pass
 * plain objects.
 */
export type SwapToken = SwapTokenInfo
export type SwapWarning = { code: string; message: string }
/** A wallet operation as the API shows it: its status, transaction hash, the planner's result fields, and the error that ended it. */
export type WalletOpView = {
  [field: string]: unknown
  id: string
  agentId: string
  kind: string
  status: string
  txHash: string | null
  error: { code: string; message: string } | null
}

/** The agent a swap is from, with its effective policy (guardrails applied). */
export type SwapAgent = {
  wallet: Address; policy: Partial<Policy>; status: string; /** Its active market listing, if any. */ listingId?: string | null | undefined
  /** `paper`: its swaps are filled into its virtual ledger, never sent (docs/api.md, "Paper agents"). */
  mode?: 'live' | 'paper' | undefined
}

/** A paper agent's virtual balances (src/adapters/db/paper.store.ts). */
export interface PaperBalances {
  /** The agent's virtual balance of a token, in base units. */
  balanceOf(agentId: string, token: SwapToken): Promise<bigint>
  /** The virtual pool of a paper token the agent launched (address in lower case), or undefined. */
  pool?(agentId: string, token: string): Promise<PaperPoolState | undefined>
}

export interface SwapAgents {
  /** The account's agent, or undefined when there is none (or it is another account's). */
  forSwap(accountId: string, agentId: string): Promise<SwapAgent | undefined>
}

export interface SwapTokens {
  /** A symbol names a verified token only: a look-alike launch is named by its address. */
  lookup(ref: string): Promise<{ token: SwapToken } | { error: string }>
  /** WETH and USDC (lower case): route hops through them are named by symbol. */
  readonly weth: Address
  readonly usdc: Address
}

/** Reads of one block: every read of one pricing is of the same block. */
export interface MarketAtBlock {
  findRoute(q: { tokenIn: Address; tokenOut: Address; amountIn: bigint }): Promise<PricedRoute>
  priceRoute(route: SwapRoute, amountIn: bigint): Promise<PricedRoute>
  /** USD values at mid prices of this block: `usd` is a 2-decimal string, null when unpriced. */
  prices(): Promise<{ usd(token: Address, amount: bigint): Promise<string | null> }>
  blockTimestamp(): Promise<bigint>
}

export interface SwapMarket {
  /** Pins the latest block; started early, it runs while the request is checked. */
  atLatestBlock(): Promise<MarketAtBlock>
}

export interface SwapSimulator {
  /** ETH and tokenIn held by the wallet (0 for a native tokenIn), and the latest base fee. */
  funds(owner: Address, tokenIn: SwapToken): Promise<{ eth: bigint; token: bigint; baseFeePerGas: bigint | null }>
  /** The contract the route's input is approved to (null when ETH is paid) and its current allowance. */
  allowance(route: SwapRoute, tokenIn: SwapToken, owner: Address): Promise<{ spender: Address | null; allowance: bigint }>
  swapTx(p: { route: SwapRoute; nativeIn: boolean; nativeOut: boolean; amountIn: bigint; minAmountOut: bigint; recipient: Address; deadline: bigint }): PlannedTx
  approveTx(token: Address, spender: Address): PlannedTx
  /** Every transaction in order, as the chain would run them. */
  simulate(owner: Address, txs: PlannedTx[]): Promise<SimulatedCall[]>
  /** Honeypot / transfer-tax warnings for buying an unverified token (nothing is sent). */
  sellBackWarnings(p: {
    wallet: Address
    route: PricedRoute
    tokenIn: SwapToken
    tokenOut: SwapToken
    amountIn: bigint
    expectedOut: bigint
    deadline: bigint
  }): Promise<SwapWarning[]>
}

/** What a quote fixed: executing with its `quoteId` must ask for the same swap, and keeps its route and minimum. */
export type StoredQuote = {
  accountId: string
  agentId: string
  tokenIn: Address
  nativeIn: boolean
  tokenOut: Address
  nativeOut: boolean
  amountIn: bigint
  slippageBps: number
  route: SwapRoute
  minAmountOut: bigint
  expiresAt: number
}

export interface SwapQuoteStore {
  save(quoteId: string, quote: StoredQuote): Promise<void>
  /** Refused when unknown or expired (QuoteExpiredError) or used by a swap other than `opId` (QuoteUsedError). */
  load(p: { accountId: string; quoteId: string; opId: string }): Promise<StoredQuote>
}

/** A wallet operation as the swap use cases see it. */
export type SwapOperation = { accountId: string; isSwap: boolean; agentId: string; params: SwapParams; view: WalletOpView }

export interface SwapOperations {
  /** USD the agent's money moves spent in the last 24 hours; `exceptId`'s own record left out (a retry of it checks as the first try did). */
  spentTodayUsd(agentId: string, exceptId?: string): Promise<string>
  find(opId: string): Promise<SwapOperation | undefined>
  /**
   * Records the operation (under the agent's lock: `checkSpend` with the spend so far, and the
   * quote consumed in the same transaction, so it executes once), starts it, waits for its end.
   */
  start(p: {
    opId: string
    accountId: string
    agentId: string
    params: SwapParams
    usdValue: string
    /** `decision`: the owners' policies' decision made under the lock (an accept skips the guardrails). */
    checkSpend(spentTodayUsd: string, decision?: PolicyDecision): void
    consumeQuoteId: string | undefined
    /** The actor the swap is made for (a chat turn, a run): the operation is its child and nothing waits here. */
    parentId: string | undefined
    /** Set when the policy asks an owner to approve it first: it waits in `awaiting_approval`. */
    approval?: ApprovalRequest | null | undefined
    /** The owners' policies' decision and the facts it was made on (made again under the agent's lock). */
    policy?: PolicyStamp | undefined
  }): Promise<WalletOpView>
  /** Waits for the operation's end up to `waitMs` (default: the port's own wait); undefined when it does not exist. */
  waitEnd(opId: string, waitMs?: number): Promise<WalletOpView | undefined>
}

export interface Clock {
  now(): number
}

export type SwapPorts = {
  agents: SwapAgents
  tokens: SwapTokens
  market: SwapMarket
  simulator: SwapSimulator
  quotes: SwapQuoteStore
  operations: SwapOperations
  clock: Clock
  newId(): string
  /** A paper agent's virtual balances: its swaps are checked against them instead of the chain. */
  paper?: PaperBalances | undefined
  /** The owners' policies (docs/api.md, "Policies"); without it, only the guardrails decide. */
  policies?: PolicyGate | undefined
}
