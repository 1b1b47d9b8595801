import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine } from 'xstate'

/**
 * What the runtime needs to know about one kind of actor. The machine is used only as a pure
 * reducer (`initialTransition`/`transition`); its custom actions listed in `effects` become
 * durable effect rows, and its delayed raises become durable timers.
 */
export type ActorKind = {
  kind: string
  machine: AnyStateMachine
  /** Bumped when a change to the machine would misread older snapshots. */
  machineVersion: number
  /** Validates an event before it reaches the machine (throws a ServiceError on bad input). */
  parseEvent(event: unknown): AnyEventObject
  /** The public `status` of a snapshot (a state name, as the API reports it). */
  statusOf(snapshot: AnyMachineSnapshot): string
  /** Custom action types that are executed as effects after commit. */
  effects: readonly string[]
  /**
   * Effects that never give up (they retry with capped back-off): waiting for a transaction that
   * was signed and stored must not end as "failed" while that transaction can still land.
   */
  persistentEffects?: readonly string[]
}

export type ActorEntry = {
  id: string
  kind: ActorKind
  accountId: string
  snapshot: AnyMachineSnapshot
  version: number
  status: string
  /** Live timers: key -> generation. A timer event whose generation is not here is stale. */
  timers: Record<string, number>
}

export type EffectRow = {
  id: string
  actorId: string
  accountId: string
  kind: string
  params: unknown
  status: 'pending' | 'prepared' | 'sent' | 'done' | 'failed'
  externalRef: string | null
  result: unknown
  attempts: number
}

export type EffectContext = {
  /** Records progress (e.g. signed bytes stored before broadcast) so a retry resumes, never redoes. */
  record(update: { status: 'prepared' | 'sent'; externalRef?: string; result?: unknown }): Promise<void>
}

/** Runs one effect; returns the event that reports its outcome to the actor. Must be safe to run twice. */
export type EffectHandler = (effect: EffectRow, ctx: EffectContext) => Promise<AnyEventObject>
