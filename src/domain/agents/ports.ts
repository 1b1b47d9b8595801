import type { Queryable } from '../billing/ports.ts'
import type { Policy } from './policy.ts'
import type { PendingChangeRow } from './pendingChanges.ts'
import type { AuditActor, AuditPage } from './auditTrail.ts'

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
  /** Other accounts' mirrors may copy this agent's swaps while it is public (PATCH `allow_copy`). */
  allowCopy?: boolean | undefined
  publicDescription: string | null
  /** Seconds between the runs a running agent starts on its own; 0 = never. */
  runIntervalSeconds: number
  /** `live`, or `paper` (its money moves simulated into a virtual ledger); fixed at creation. */
  mode: 'live' | 'paper'
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
  /** The agent's active market listing: while set, nothing may move its funds (`assertNotListed`). */
  listingId?: string | null | undefined
}

/** A new agent's row: its configuration and its wallet (the key encrypted bound to the agent id). */
export type NewAgent = AgentConfig & {
  policy: Policy
  walletAddress: string
  walletKeyEncrypted: string
}

export type WhitelistEntry = { address: string; label: string | null; usableAt: Date | string; createdAt: Date | string }

/**
 * The agent aggregate's storage (implemented over MikroORM in src/adapters/db/agents.repository.ts). Every
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
  /**
   * Adds (or relabels) an address, usable after `holdSeconds`, journaled with `actor` in the same
   * statement; undefined (nothing written) when the agent is no longer the account's (sold meanwhile).
   */
  addToWhitelist(input: { agentId: string; accountId: string; address: string; label: string | null; holdSeconds: number; actor: AuditActor }): Promise<WhitelistEntry | undefined>
  /** Removes an address, journaled with `actor` in the same statement; undefined when it was not listed or the agent is no longer the account's. */
  removeFromWhitelist(input: { agentId: string; accountId: string; address: string; actor: AuditActor }): Promise<WhitelistEntry | undefined>
  /** Throws NotFoundError('Agent') unless the account has this agent (in any status); reads nothing else. */
  assertOwned(accountId: string, agentId: string): Promise<void>
  /**
   * Sets the given configuration columns in the caller's transaction, locking the row, unless the
   * agent's actor is deleted (then false: an update never lands on a deleted agent).
   */
  updateConfig(input: { accountId: string; agentId: string; set: AgentConfigPatch }, tx: Queryable): Promise<boolean>
}

/** The configuration columns an update may set (snake_case, as the columns and the request body). */
export type AgentConfigPatch = Partial<{
  name: string
  model: string
  skills: string[]
  system_prompt: string | null
  persona: string | null
  strategy: string | null
  temperature: number | null
  is_public: boolean
  allow_copy: boolean
  public_description: string | null
}>

export type AgentCommand = 'agent.start' | 'agent.stop' | 'agent.delete'
/** An agent actor's status as it is now, and the reason of a stop or failure. */
export type AgentLiveStatus = { status: string; reason: string | null }

/**
 * The agent's actor (implemented over the actor runtime in src/actors/agent/agentActors.ts): it owns
 * the agent's status and lifecycle.
 */
export interface AgentActors {
  /** Creates the actor in the caller's transaction (with the agent's row); call the answer once it committed. */
  create(input: { agentId: string; accountId: string; runIntervalSeconds: number }, tx: Queryable): Promise<() => void>
  /** The live status of the account's agent actor; undefined when it has none with this id. */
  status(accountId: string, agentId: string): Promise<AgentLiveStatus | undefined>
  /** Sends a lifecycle command; answers once the new state is committed (409 when the state refuses it). */
  send(agentId: string, command: AgentCommand): Promise<AgentLiveStatus>
  /**
   * Tells the agent, in the caller's transaction (with the change), that its run interval
   * changed, so a running agent re-arms its schedule timer; call the answer once it committed.
   */
  scheduleChanged(input: { agentId: string; accountId: string }, tx: Queryable): Promise<() => void>
}

/** A new agent's custodial wallet: the key encrypted bound to the agent id (src/adapters/chain/agentAdapters.ts). */
export type AgentWallet = { address: string; encryptedKey: string }

/** The audit trail of the account's subjects, newest first (src/adapters/db/auditTrail.store.ts). */
export type AuditReader = (q: { accountId: string; subjectId: string; limit: number; cursor?: string | undefined }) => Promise<AuditPage>
