import type { Queryable } from '../billing/ports.ts'
import type { Policy } from './policy.ts'
import type { PendingChangeRow } from './effectiveGuardrails.ts'
import type { AuditActor } from './auditTrail.ts'

/** Runs `fn` inside BEGIN/COMMIT on one connection (handed in: the domain opens no connection itself). */
export type WithTransaction = <T>(fn: (tx: Queryable) => Promise<T>) => Promise<T>

/** What an agent's owner sets (in an `AgentRecord`, `payoutWallet` is the effective one). */
type AgentConfig = {
  id: string
  accountId: string
  name: string
  model: string
  skills: string[]
  systemPrompt: string | null
  payoutWallet: string | null
  persona: string | null
  strategy: string | null
  temperature: number | null
  isPublic: boolean
  publicDescription: string | null
  /** Seconds between the runs a running agent starts on its own; 0 = never. */
  runIntervalSeconds: number
}

/**
 * An agent of an account as it applies now: its configuration, its actor's status, and its
 * policy and payout wallet with the pending changes whose hold has passed laid over them.
 */
export type AgentRecord = AgentConfig & {
  /** Effective (stored policy plus matured pending changes); fields never set are absent. */
  policy: Partial<Policy>
  walletAddress: `0x${string}`
  /** ISO 8601. */
  createdAt: string
  updatedAt: string
  /** The creation time as the database sent it (full precision), for list cursors. */
  cursorAt: string
  /** The actor's status as last committed. */
  status: string
  statusReason: string | null
  /** Policy and payout-wallet changes still in their hold, soonest first. */
  pending: PendingChangeRow[]
}

/** A new agent's row: its configuration and its wallet (the key encrypted bound to the agent id). */
export type NewAgent = AgentConfig & {
  policy: Policy
  walletAddress: string
  walletKeyEncrypted: string
}

export type WhitelistEntry = { address: string; label: string | null; usableAt: Date | string; createdAt: Date | string }

/**
 * The agent aggregate's storage (implemented over MikroORM in src/db/agents.repository.ts). Every
 * read is scoped by account: another account's agent is absent, exactly like a missing one. A
 * use case's unit test passes a plain in-memory object instead.
 */
export interface AgentsRepository {
  /** The agent of this account with its actor's status and effective guardrails; undefined when none. */
  findOwned(accountId: string, agentId: string): Promise<AgentRecord | undefined>
  /** As `findOwned`, but throws NotFoundError('Agent') when there is none. */
  getOwned(accountId: string, agentId: string): Promise<AgentRecord>
  /** The account's agents, newest first, at most `limit`, after the cursor when given. */
  list(accountId: string, page: { limit: number; after?: { createdAt: string; id: string } | undefined }): Promise<AgentRecord[]>
  /** Inserts the row in the caller's transaction (the agent's actor is created in the same one). */
  insert(agent: NewAgent, tx: Queryable): Promise<void>
  /** The agent's whitelist, oldest first. */
  whitelist(agentId: string): Promise<WhitelistEntry[]>
  /** Adds (or relabels) an address, usable after `holdSeconds`, journaled with `actor` in the same statement. */
  addToWhitelist(input: { agentId: string; accountId: string; address: string; label: string | null; holdSeconds: number; actor: AuditActor }): Promise<WhitelistEntry>
  /** Removes an address, journaled with `actor` in the same statement; undefined when it was not listed. */
  removeFromWhitelist(input: { agentId: string; accountId: string; address: string; actor: AuditActor }): Promise<WhitelistEntry | undefined>
  /** Throws NotFoundError('Agent') unless the account has this agent (in any status); reads nothing else. */
  assertOwned(accountId: string, agentId: string): Promise<void>
}
