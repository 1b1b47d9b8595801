import type { FieldErrors } from '../errors.ts'
import type { AutomationChanges, AutomationInput, FiringRecord, FiringSource, LeaderSwap } from './automation.types.ts'

/** An automation as its actor holds it, with its status and times. */
export type AutomationState = AutomationInput & {
  status: 'armed' | 'executing' | 'paused' | 'completed' | 'cancelled' | 'error'
  runCount: number
  lastTriggeredAt: string | null
  nextRunAt: string | null
  lastError: string | null
  firings: FiringRecord[]
  completedReason: string | null
  suspended: boolean
  pending: FiringSource[]
  updatedAt: string
  /** A trailing stop's highest price since armed. */
  high?: string | null | undefined
  /** A mirror's latest leader swap (GET /automations/:id `lastLeaderSwap`). */
  lastLeaderSwap?: LeaderSwap | null | undefined
  /** The firing in flight (what fired it). */
  current?: { source: FiringSource } | null | undefined
  /** The row's created_at as the database wrote it (the cursor's position). */
  cursorAt: string
}

/** The commands an automation's actor takes (409 `invalid_state` when its state refuses one). */
export type AutomationCommand =
  | { type: 'automation.pause' }
  | { type: 'automation.resume' }
  | { type: 'automation.cancel' }
  | { type: 'automation.update'; changes: AutomationChanges }
  | { type: 'automation.trigger'; source: FiringSource }

/** Automations as actors (src/actors/automation/automations.ts). */
export interface Automations {
  /** Creates the automation's actor; one created first under this id (a retried request) is kept. */
  create(input: AutomationInput): Promise<void>
  get(id: string): Promise<AutomationState | undefined>
  list(q: { accountId: string; agentId?: string | undefined; status?: string | undefined; kind?: string | undefined; limit: number; after?: { at: string; id: string } | undefined }): Promise<AutomationState[]>
  /** Sends a command and answers the automation once the new state is committed. */
  send(id: string, command: AutomationCommand): Promise<AutomationState>
}

export type AutomationPorts = {
  automations: Automations
  agents: { getOwned(accountId: string, agentId: string): Promise<{ id: string; skills: string[]; status: string }> }
  /** The tools the agent's skills grant (read and trade tools), and a tool's argument check (field errors, or null). */
  tools: {
    granted(accountId: string, skills: readonly string[]): Promise<string[]>
    check(tool: string, args: Record<string, unknown>): FieldErrors | null
  }
  /** A token by symbol or address (undefined: unknown), and its USD price now (null: no price). */
  tokens: {
    resolve(ref: string): Promise<{ address: string; symbol: string; decimals?: number } | undefined>
    priceUsd(ref: string): Promise<string | null>
  }
  /** Mirrors: a leader as a mirror may see it (any account's; undefined: none), and every live mirror as follower -> leader agent ids. */
  mirrors: {
    leader(agentId: string): Promise<{ accountId: string; isPublic: boolean; allowCopy: boolean; status: string } | undefined>
    edges(): Promise<Array<{ follower: string; leader: string }>>
  }
  limits: { minIntervalSeconds: number; maxFailures: number }
  clock: { now(): number }
}
