import type { PolicyGate, PolicyStamp } from '../policies/ports.ts'
import type { PolicyDecision } from '../policies/ownerPolicyRules.ts'
import type { ApprovalRequest } from '../approvals/approval.types.ts'
import type { Address } from 'viem'
import type { LedgerOp, SwapFill } from './ledgerOps.ts'
import type { AgentsRepository } from '../agents/ports.ts'
import type { WalletOpView } from '../swaps/ports.ts'

/**
 * What the wallet use cases need from outside. Adapters (src/adapters/chain/walletAdapters.ts and
 * src/adapters/db/wallet.store.ts) implement these and src/app/core.ts hands them in; a unit test passes
 * plain objects.
 */
export type { WalletOpView }

/** A token as transfers and the portfolio see it (`address` is WETH's for ETH, lower case). */
export type WalletToken = { address: Address; symbol: string; decimals: number; native: boolean; verified: boolean }

/** USD with 18 decimals: of one whole token, and of an amount. */
export type UsdValue = { unitUsd18: bigint; amountUsd18: bigint }

/** Params of a `transfer` wallet operation as stored with it (JSON: the amount in base units as a decimal string). */
export type TransferParams = { token: Address; native: boolean; amount: string; to: Address }

/** The agents aggregate, as far as the wallet reads it: ownership, wallet, policy, status and whitelist. */
export type WalletAgents = Pick<AgentsRepository, 'getOwned' | 'assertOwned' | 'whitelist'>

export interface WalletTokens {
  /** Any token by symbol or 0x address (a wallet may send an unverified token it holds); undefined when unknown. */
  resolve(ref: string): Promise<WalletToken | undefined>
}

/** Reads of the chain at its latest block. */
export interface WalletChain {
  balanceOf(token: WalletToken, owner: Address): Promise<bigint>
  /** A price reader of the latest block (or of `blockNumber`): USD of an amount, undefined when the token has no market. */
  prices(blockNumber?: bigint): Promise<{ usd(token: WalletToken, amount: bigint): Promise<UsdValue | undefined> }>
  /**
   * What sending the transfer costs, as the transaction outbox would sign it: its gas limit (the
   * estimate plus a margin; a transfer that would revert is a SimulationRevertedError), the fee
   * cap per gas and the ETH the wallet holds. Nothing is sent.
   */
  transferFee(owner: Address, params: TransferParams): Promise<{ gasLimit: bigint; maxFeePerGas: bigint; ethBalance: bigint }>
}

/** A wallet operation as the transfer use case sees it. */
export type TransferOperation = {
  accountId: string
  isTransfer: boolean
  agentId: string
  params: TransferParams
  /** The USD value recorded toward the agent's 24-hour spend. */
  usdValue: string
  view: WalletOpView
}

export interface TransferOperations {
  /** USD the agent's money moves spent in the last 24 hours; `exceptId`'s own record left out (a retry of it checks as the first try did). */
  spentTodayUsd(agentId: string, exceptId?: string): Promise<string>
  find(opId: string): Promise<TransferOperation | undefined>
  /**
   * Records the operation (under the agent's lock: `checkSpend` with the spend so far), starts
   * it and waits for its end through the runtime's commits (pending when the wait runs out).
   */
  start(p: {
    opId: string; accountId: string; agentId: string; params: TransferParams; usdValue: string; checkSpend(spentTodayUsd: string, decision?: PolicyDecision): void
    /** The actor the transfer is made for (a chat turn, a run): the operation is its child and nothing waits here. */
    parentId: string | undefined
    /** Set when the policy asks an owner to approve it first: it waits in `awaiting_approval`. */
    approval?: ApprovalRequest | null | undefined
    /** The owners' policies' decision and the facts it was made on (made again under the agent's lock). */
    policy?: PolicyStamp | undefined
  }): Promise<WalletOpView>
  /** Waits for the operation's end up to `waitMs` (default: the port's own wait); undefined when it does not exist. */
  waitEnd(opId: string, waitMs?: number): Promise<WalletOpView | undefined>
}

/** A price the index saw: USD (18 decimals) of one whole unit (10^18 base units) of `token`, at a trade's block time. */
export type IndexedPrice = { token: string; at: Date; usd18: bigint }


export interface PortfolioReads {
  /** ETH, USDC, the stocks and WETH, in this order: what any wallet may hold. */
  standardTokens(): Promise<WalletToken[]>
  /**
   * Addresses of other tokens the wallet may hold: those the agent launched or traded on chain,
   * `swappedTo` (what its confirmed swaps through this service bought, from its ledger: no
   * indexer lag), and those it received by plain transfers (scanned from the chain's Transfer
   * logs since the last scan), in this order, each once.
   */
  otherTokenAddresses(agentId: string, owner: Address, swappedTo: readonly string[]): Promise<string[]>
  /** The agent's confirmed swaps, oldest first. */
  confirmedSwaps(agentId: string): Promise<SwapFill[]>
  /** The agent's cost basis and PnL ledger (pnlRules.ts): confirmed swaps, transfers out, claims, live launches and indexed transfers in, in block order. */
  ledgerOps(agentId: string): Promise<LedgerOp[]>
  /**
   * USD prices the index saw at trades (indexer `trade` rows): a launched token's after each of
   * its trades, and ETH's (keyed by WETH's address) at each trade quoted in ETH. Of the tokens
   * named, the last one per token and step of `stepSeconds` from `from` up to `to`, and the last
   * one before `from`, oldest first.
   */
  indexedPrices(p: { tokens: string[]; from: Date; to: Date; stepSeconds: number }): Promise<IndexedPrice[]>
  /** The account's agent whose wallet this is (lower case), or undefined. */
  agentIdByWallet(accountId: string, wallet: string): Promise<string | undefined>
  /**
   * The wallet's balance of a token; null when a contract that merely emitted a Transfer to it
   * does not answer `balanceOf` (a chain that is down is still an error).
   */
  holding(token: WalletToken, owner: Address, blockNumber?: bigint): Promise<bigint | null>
  /** A paper agent's virtual balances now, by token (`eth` for ETH, else the address in lower case). */
  paperBalances?(agentId: string): Promise<Map<string, bigint>>
  /** The virtual pools of the paper tokens a paper agent launched, by token address (lower case): its holding of one is valued at its pool's price. */
  paperPools?(agentId: string): Promise<Map<string, PaperPoolView>>
}

/** A paper launch's virtual pool as the portfolio reads it: the token's symbol and name, its quote asset's symbol and the reserves (base units). */
export type PaperPoolView = { symbol: string; name: string; quoteSymbol: string; quoteReserve: bigint; tokenReserve: bigint }

/** One transaction of the wallet's outbox. */
export type OutboxTx = {
  id: string
  kind: string
  hash: string | null
  nonce: number
  status: string
  to: string | null
  blockNumber: number | null
  gasUsed: string | null
  contractAddress: string | null
  replacedBy: string | null
  createdAt: string
  updatedAt: string
}

export interface WalletOutbox {
  /** The agent's transactions newest first, at most `limit`, before the transaction `before` when given. */
  page(agentId: string, p: { limit: number; before?: string | undefined }): Promise<OutboxTx[]>
}

export interface Clock {
  now(): number
}

export type WalletPorts = {
  agents: WalletAgents
  tokens: WalletTokens
  chain: WalletChain
  operations: TransferOperations
  portfolio: PortfolioReads
  outbox: WalletOutbox
  clock: Clock
  /** The owners' policies (docs/api.md, "Policies"); without it, only the guardrails decide. */
  policies?: PolicyGate | undefined
}

export type { SwapFill } from './ledgerOps.ts'
