import type { AutomationInput, FiringRecord, FiringSource, LeaderSwap } from '../../domain/automations/automation.types.ts'
import type { ChildEndEvent } from '../runtime/index.ts'

/** What an automation's machine keeps: its definition, its firings and what it waits for. */
export type AutomationContext = AutomationInput & {
  /** The number of the last firing started (firing ids and their child's ids derive from it). */
  firingNumber: number
  /** Firings that ran their action (ok or failed; not those skipped because the agent was not running). */
  runCount: number
  failuresInRow: number
  lastTriggeredAt: string | null
  /** When the timer fires next (interval and schedule triggers), else null. */
  nextRunAt: string | null
  lastError: string | null
  firings: FiringRecord[]
  /** The firing in flight; a timer firing names the `tick` it serves (nextRunAt has moved past it). */
  current: { number: number; source: FiringSource; childId: string | null; result: unknown; catchUp?: boolean; tick?: string; slice?: number } | null
  /** A mirror: the latest leader swap it started to copy (or refuse). */
  lastLeaderSwap?: LeaderSwap | null
  /** A trailing stop: the highest price seen since it was armed (from the blocks' prices in its events). */
  high?: string | null
  /** Version 1 only: the next timer firing was to serve missed ticks (read once, then false). */
  catchingUp?: boolean
  /** When the latest timer firing started (absent in automations stored before it was kept). */
  lastTimerAt?: string | null
  /** A child end that came before the firing reported its child. */
  earlyEnd: ChildEndEvent | null
  pending: FiringSource[]
  pauseRequested: boolean
  cancelRequested: boolean
  /** The agent was not running when a firing was due: no timer until it starts again. */
  suspended: boolean
  /** Why it completed (max firings reached, the budget spent, expired, ...). */
  completedReason: string | null
}
