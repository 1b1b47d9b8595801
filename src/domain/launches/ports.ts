import type { Queryable } from '../billing/ports.ts'
import type { PolicyGate } from '../policies/ports.ts'
import type { ApprovalRecord } from '../approvals/approval.types.ts'
import type { Policy } from '../agents/policy.ts'
import type { MovedToken } from '../agents/policyCheck.ts'
import type { LaunchInput, LaunchVenue } from './launch.schema.ts'

/**
 * What the launch use cases need from outside. Adapters (src/adapters/chain/launchAdapters.ts) implement
 * these and src/app/core.ts hands them in; a unit test can pass plain objects.
 */

/** The launching agent with its effective policy (guardrails applied) and its actor's status. */
export type LaunchAgent = { status: string; policy: Partial<Policy>; /** Its active market listing, if any. */ listingId?: string | null | undefined; /** A paper agent's launch makes a virtual token, nothing sent (docs/api.md, "Paper agents"). */ mode?: 'live' | 'paper' | undefined }

export interface LaunchAgents {
  /** The account's agent, or undefined when there is none (or it is another account's). */
  forLaunch(accountId: string, agentId: string): Promise<LaunchAgent | undefined>
}

export interface LaunchVenues {
  /** The quote asset symbols a venue accepts (from the deployment manifest). */
  quotes(venue: LaunchVenue): readonly string[]
  /** True for a verified asset's symbol (case-insensitive), which no launch may take. */
  isVerifiedSymbol(symbol: string): Promise<boolean>
}

export interface LaunchPrices {
  /** The quote asset as the policy's token lists see it (its address, WETH's for ETH); undefined when unknown. */
  quoteToken(symbol: string): Promise<MovedToken | undefined>
  /** USD value of a self-funded launch's seed at the latest block (2-decimal string); undefined when unpriced. */
  seedUsd(input: LaunchInput): Promise<string | undefined>
  /** USD of one whole ETH and of one whole quote asset (18 decimals), read at one block. */
  unitUsd18(quote: string): Promise<{ eth: bigint; quote: bigint } | undefined>
}

/** What the chain says a launch would make, with nothing sent. */
export type LaunchPrediction = {
  predictedTokenAddress: string
  totalSupply: bigint
  /** The starting market cap in base units of the quote asset. */
  marketCap: bigint
  quoteDecimals: number
  fees: Record<string, string | number>
}

export interface LaunchSimulator {
  /**
   * Checks the agent wallet's funds (gas, a self-funded seed) and simulates the launch
   * transaction, as the launch's own simulation does (same errors); nothing is sent.
   */
  simulate(input: LaunchInput): Promise<{ gas: bigint; maxFeePerGas: bigint }>
  predict(input: LaunchInput): Promise<LaunchPrediction>
}

export interface LaunchSpend {
  /** USD the agent's money moves spent in the last 24 hours; `exceptId`'s own record left out (a retry of it checks as the first try did). */
  spentTodayUsd(agentId: string, exceptId?: string): Promise<string>
  /**
   * Records a self-funded seed against the agent's 24-hour spend, under the agent's lock:
   * `checkSpend` sees the spend so far. The record's id is the launch's: a failed launch no
   * longer counts, and recording it twice is a no-op.
   */
  reserve(p: {
    launchId: string; accountId: string; agentId: string; usdValue: string; checkSpend(spentTodayUsd: string): void
    /** The owners' policies again, under the same lock (a window's spend counted with the concurrent moves); throws to refuse. */
    policyCheck?: ((db: Queryable) => Promise<void>) | undefined
  }): Promise<void>
}

/** The launch actor's context: its input and what each step found. */
export type LaunchContext = Omit<LaunchInput, 'approval'> & {
  gas: string | null
  txHash: string | null
  tokenAddress: string | null
  poolAddress: string | null
  error: { code: string; message: string } | null
  /** Set when the seed waits (or waited) for an owner's approval. */
  approval?: ApprovalRecord | null | undefined
}

/** A launch as stored: its actor's status and context, and the times of its row (ISO 8601). */
export type LaunchRecord = {
  id: string
  accountId: string
  /** False for an actor of another kind under this id. */
  isLaunch: boolean
  status: string
  context: LaunchContext
  createdAt: string
  updatedAt: string
}

export interface LaunchActors {
  find(launchId: string): Promise<LaunchRecord | undefined>
  /**
   * Creates the launch actor (`pending`); one created first under this id by a concurrent retry
   * is kept. With `parentId` (a chat turn, a run) it is that actor's child and its end reaches it.
   * Started by that parent's own step (a model's tool call), it is created and started with the
   * step's outcome, in the parent's commit: answered as it will then stand (undefined otherwise).
   */
  create(input: LaunchInput, parentId?: string): Promise<LaunchRecord | undefined>
  /** Starts a `pending` launch (a launch already started is left as it is); answers it as it then stands. */
  start(launchId: string): Promise<LaunchRecord | undefined>
  /** Waits on the runtime's commits (no polling) until the launch is `live` or `failed`, or `timeoutMs` passes. */
  waitEnd(launchId: string, timeoutMs: number): Promise<LaunchRecord | undefined>
}

export type LaunchPorts = {
  agents: LaunchAgents
  venues: LaunchVenues
  prices: LaunchPrices
  simulator: LaunchSimulator
  spend: LaunchSpend
  actors: LaunchActors
  /** A fresh id (a preview's throwaway launch id). */
  newId(): string
  /** The owners' policies (docs/api.md, "Policies"); without it, only the guardrails decide. */
  policies?: PolicyGate | undefined
}
