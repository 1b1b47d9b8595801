import type pg from 'pg'
import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine } from 'xstate'
import type { SqlGuard, SqlWrite } from './sql.ts'
import type { NewEffect } from './actorRows.ts'

/**
 * What the runtime needs to know about one kind of actor. The machine is used only as a pure
 * reducer (`initialTransition`/`transition`); its custom actions listed in `effects` become
 * durable effect rows, and its delayed raises become durable timers.
 */
export type ActorKind = {
  kind: string
  machine: AnyStateMachine
  /** Bumped when a change to the machine would misread older snapshots (see `migrate`). */
  machineVersion: number
  /**
   * Turns a persisted snapshot written by machine version `fromVersion` into one this version
   * reads. Without it, an actor stored under another version refuses to load (and is marked stuck).
   */
  migrate?(persisted: unknown, fromVersion: number): unknown
  /**
   * Timers an older machine version armed under xstate's generated names (`xstate.after.<delay>.<state>`),
   * each with the timer of this version that replaced it (its id, which is also its event's type).
   * When an old one fires, the machine hears the replacing event; when the machine sets or cancels
   * the replacing timer, the old one goes too. So a machine never names xstate's internals, and
   * its journal holds only its own events. Default: none.
   */
  renamedTimers?: Readonly<Record<string, string>>
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
  /**
   * The states that mean this kind of actor failed (ended in error, or halted until someone acts):
   * what the operator console's "failed only" lists (GET /ops/actors?failed=true). Default: none.
   */
  failureStates?: readonly string[]
  /**
   * Event types an operator may not replay from a dead letter (POST /ops/dead-letters/:seq/retry
   * answers 409 `retry_moves_funds`): each starts a fund-moving effect whose policy check ran
   * when the actor was requested, not when the effect runs, so a late replay could move funds
   * under a policy that has changed since (the kill switch set, the day's cap spent). Default: none.
   */
  unsafeToReplay?: readonly string[]
  /** For a child actor: whether its final snapshot is a failure (its parent hears `child.failed`). Default: status `failed`. */
  isFailure?(snapshot: AnyMachineSnapshot): boolean
  /**
   * Actors besides the parent that hear this one's end (`child.done` / `child.failed`, the same
   * event): a run an automation's firing started tells that automation. Default: none.
   */
  watchersOf?(snapshot: AnyMachineSnapshot): readonly string[]
  /**
   * Whether this child's end goes to its parent (its watchers hear it regardless): a parent that
   * needs a child's end only sometimes asks for it (a run's agent, when a check met the run in
   * progress), and a child that was not asked ends without a row in its parent's inbox, which
   * the parent would read and mark processed for nothing. Default: always.
   */
  tellsParent?(snapshot: AnyMachineSnapshot): boolean
  /**
   * What to give back when actors of this kind were asked for as children but never created (the
   * parent ended first): a write run in the transaction that gives up on them (a reservation the
   * caller made for them, say). Default: nothing.
   */
  unstarted?(ids: readonly string[]): SqlWrite
  /**
   * The retention class of an ended snapshot: how long the actor keeps its full history (journal,
   * effects, inbox rows) before the compaction deletes it and keeps the row alone (the runtime's
   * `retention.windowsMs`, by class). Default: `default`.
   */
  retention?(snapshot: AnyMachineSnapshot): string
  /**
   * Context keys the compaction drops from an ended actor's snapshot: what only its history
   * needed (a transcript sent to a model, a system prompt), never what the API serves of it.
   * Default: none (the snapshot is kept whole).
   */
  compactDrops?: readonly string[]
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
  /** The actor that started this one as a child (it hears of this one's end), if any. */
  parentId: string | null
  /** When its row was created (the database's clock): known to the runtime that created it, absent on a loaded entry. */
  createdAt?: Date
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
  /** The trace context stored with the effect (an opaque string, see TraceHooks), or null. */
  trace?: string | null
  /**
   * No earlier run of this effect can have begun: it was written by the commit that planned it
   * and is run at once by the node that wrote it, or it is claimed for the first time (no claim
   * before, no recorded attempt). False for a retry and for a row taken over from a node that
   * died holding it. A handler may skip its look for what an earlier run started when true.
   */
  firstRun?: boolean
}

/**
 * A write made with an effect's outcome (see `EffectContext.finishWith`): run in the transaction
 * that records it, or, described as SQL, sent in the very statement that commits the outcome's
 * transition (one round trip instead of a transaction of several). A function may answer what
 * to do once that transaction committed (run the effects of an actor it created).
 */
export type FinishWrite = ((tx: pg.PoolClient) => Promise<void | (() => void)>) | DescribedWrite

/**
 * A finish write described as SQL, with what it needs around it: `afterCommit`, run once the
 * statement that carried it committed (the effects of an actor it created); `inTransaction`, what
 * to run instead when it goes out in a transaction rather than in the transition's own statement
 * (where a condition it relied on, the transition committing with it, does not hold).
 */
export type DescribedWrite = SqlWrite & {
  afterCommit?: (() => void) | undefined
  inTransaction?: ((tx: pg.PoolClient) => Promise<void | (() => void)>) | undefined
}

export type EffectContext = {
  /** Records progress (e.g. signed bytes stored before broadcast) so a retry resumes, never redoes. */
  record(update: { status: 'prepared' | 'sent'; externalRef?: string; result?: unknown }): Promise<void>
  /**
   * Registers a write (a ledger charge, a message row) committed in the same transaction that
   * marks the effect done and puts its outcome event in the actor's inbox: both commit or
   * neither does, and a worker whose lease was taken over writes nothing. Only on success: a
   * handler that throws has its writes dropped.
   */
  finishWith(write: FinishWrite): void
  /** The effect's actor as this runtime last committed it (its cache, else its row). */
  actor(): Promise<ActorEntry | undefined>
  /** That actor's machine context (throws when the actor is gone, so the effect is tried again). */
  context<T>(): Promise<T>
}

/**
 * Runs one effect; returns the event that reports its outcome to the actor (null: nothing to
 * report, the outcome is only recorded on the effect row). Must be safe to run twice.
 * `giveUp`, when set, gives back what earlier attempts may still hold (a credit reservation): its
 * write commits with the effect's final failure, when the runtime stops retrying it.
 */
export type EffectHandler = ((effect: EffectRow, ctx: EffectContext) => Promise<AnyEventObject | null>) & {
  giveUp?: (effect: EffectRow) => FinishWrite
}

/**
 * The effect a machine asks for to start a child actor: `{ type: SPAWN_CHILD, params: { kind,
 * key, input } }`. The child's id is `childIdOf(parentId, key)`, so a retried effect finds the
 * same child; when the child ends, the parent's inbox gets `child.done` or `child.failed`.
 */
export const SPAWN_CHILD = 'actor.spawn'

/**
 * What creates an actor. `alongside`: a write made in the same statement, or one built from the
 * actor's first effects (a hold keyed by the effect that will use it).
 */
export type CreateArgs = { id: string; accountId: string; input: unknown; parentId?: string | null; alongside?: Alongside | undefined; guard?: SqlGuard | undefined }
export type Alongside = SqlWrite | ((effects: readonly NewEffect[]) => SqlWrite | undefined)
