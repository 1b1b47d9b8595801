import { assign, cancel, enqueueActions, setup, type AnyEventObject, type AnyMachineSnapshot } from 'xstate'
import type { z } from 'zod'
import { ValidationError } from '../../domain/errors.ts'
import type { AutomationChanges, AutomationInput, FiringRecord, FiringSource } from '../../domain/automations/automation.types.ts'
import type { ActorKind } from '../runtime/index.ts'
import type { ChildEndEvent } from '../runtime/index.ts'
import { migrateAutomationSnapshot } from './automationMigrate.ts'
import { AUTOMATION_DUE, AUTOMATION_FIRE, automationEventSchema, LEGACY_DUE } from './automationEvents.ts'
import { priceFiring, sliceOf } from './orderFiring.ts'
import type { AutomationContext } from './automationContext.ts'

export { AUTOMATION_DUE, AUTOMATION_FIRE, automationEventSchema, LEGACY_DUE }
export type { AutomationContext }
/** A firing's parameters: its number, what fired it, and a TWAP's slice (the swap is keyed by it). */
export type FireParams = { number: number; source: FiringSource; slice?: number }

/** Firings kept in the context (the newest); older ones are in the journal. */
const FIRINGS_KEPT = 20
/**
 * Triggers that may wait while a firing runs, at most (a sniper hearing a burst of launches
 * during one buy); fewer when the automation has fewer firings left. More are dropped.
 */
export const PENDING_MAX = 100


/** An event as the machine takes it: `at`, when it happened, stamped by `parseEvent` as the runtime takes it in. */
type AutomationEvent = z.infer<typeof automationEventSchema> & { at?: string | undefined }

const iso = (ms: number) => new Date(ms).toISOString()
/** The time of `event` (ms): its `at`; the machine starts at the automation's creation. The machine reads no clock. */
const timeOf = (c: Pick<AutomationContext, 'createdAt'>, e: { at?: string | undefined }) => Date.parse(e.at ?? c.createdAt)
const isTimed = (c: AutomationContext) => c.trigger.type === 'interval' || c.trigger.type === 'schedule'
const everyMs = (c: AutomationContext) => (c.trigger.type === 'interval' ? c.trigger.everySeconds * 1000 : 0)

/** The first interval tick strictly after `at`, on the automation's own grid (never a burst of missed ones). */
function nextTick(c: AutomationContext, at: number): string | null {
  if (c.trigger.type !== 'interval' || !c.nextRunAt) return null
  const every = everyMs(c)
  const from = Date.parse(c.nextRunAt)
  const k = Math.max(1, Math.floor((at - from) / every) + 1)
  return iso(from + k * every)
}

/** The latest interval tick at or before `at` on the automation's grid (what a single catch-up firing serves). */
function lastTick(c: AutomationContext, at: number): string | null {
  if (c.trigger.type !== 'interval' || !c.nextRunAt) return c.nextRunAt
  const from = Date.parse(c.nextRunAt)
  return iso(from + Math.max(0, Math.floor((at - from) / everyMs(c))) * everyMs(c))
}

/** An interval tick missed by a whole period or more (the service or the agent was down). */
const missedTicks = (c: AutomationContext, at: number) => c.trigger.type === 'interval' && !!c.nextRunAt && at - Date.parse(c.nextRunAt) >= everyMs(c)

/** The most firings the automation may run (max_firings, an interval's maxRuns). */
const firingsCap = (c: AutomationContext) => Math.min(c.maxFirings ?? Infinity, c.trigger.type === 'interval' ? (c.trigger.maxRuns ?? Infinity) : Infinity)

/** Whether one more trigger may wait behind the firing in flight: within PENDING_MAX and the firings left after it. */
const pendingRoom = (c: AutomationContext) => c.pending.length < Math.min(PENDING_MAX, firingsCap(c) - c.runCount - 1)

/** Why the automation is done, or null while it goes on. */
function doneReason(c: AutomationContext, at: number): string | null {
  const t = c.trigger
  if (c.runCount >= firingsCap(c)) return 'max_firings_reached'
  if (t.type === 'schedule' && c.runCount > 0) return 'scheduled_firing_done'
  if (c.triggerOnce && c.firings.some((f) => f.outcome === 'ok')) return 'fired_once'
  const end = t.type === 'interval' ? t.endAt : t.type === 'price_threshold' ? t.expiresAt : undefined
  if (end && at >= Date.parse(end)) return 'expired'
  if (c.lastError?.startsWith('automation_budget_exhausted')) return 'max_spend_reached'
  return null
}

/**
 * The firing in flight ends (at `at`): recorded with its outcome, counted. A skipped timer firing
 * (the agent was not running) gives its tick back: it is served when the agent starts again.
 */
function recordEnd(c: AutomationContext, at: number, end: { outcome: FiringRecord['outcome']; txHash?: string | null; reason?: string | null; counted?: boolean; refusal?: boolean }): Partial<AutomationContext> {
  const cur = c.current
  if (!cur) return {}
  const record: FiringRecord = {
    number: cur.number, at: iso(at), source: cur.source.source, catchUp: cur.catchUp === true, outcome: end.outcome,
    txHash: end.txHash ?? null, reason: end.reason ?? null, childId: cur.childId,
    ...(cur.source.source === 'price' && cur.source.side ? { side: cur.source.side } : {}), ...(cur.slice ? { slice: cur.slice } : {}),
    ...(cur.source.source === 'leader_swap' ? { leaderSwapId: cur.source.swap.id } : {}),
  }
  const ran = end.outcome !== 'skipped' || end.counted === true
  return {
    current: null,
    earlyEnd: null,
    firings: [...c.firings, record].slice(-FIRINGS_KEPT),
    runCount: c.runCount + (ran ? 1 : 0),
    failuresInRow: end.outcome === 'failed' && !end.refusal ? c.failuresInRow + 1 : end.outcome === 'ok' ? 0 : c.failuresInRow,
    lastError: end.outcome === 'failed' ? (end.reason ?? 'failed') : c.lastError,
    suspended: !ran && isTimed(c),
    ...(!ran && cur.tick ? { nextRunAt: cur.tick } : {}),
  }
}

/**
 * The timer firing due at `at` starts: it serves the latest tick due (the one `nextRunAt` names, or
 * under `once` the latest of the ticks missed, as a catch-up), and `nextRunAt` moves past that
 * tick at once, so no other firing (a trigger waiting behind it, a pause, a PATCH) can leave it
 * behind. A schedule keeps its one time (a skipped firing fires again when the agent starts).
 */
function timerFiring(c: AutomationContext, at: number): Partial<AutomationContext> {
  const late = missedTicks(c, at) || c.catchingUp === true
  const tick = lastTick(c, at)!
  const nextRunAt = c.trigger.type === 'interval' ? iso(Date.parse(tick) + everyMs(c)) : c.nextRunAt
  return { nextRunAt, catchingUp: false, lastTimerAt: iso(at), current: { ...startOf(c, { source: 'timer' }), catchUp: late, tick } }
}

/** A child's end as the firing's outcome: the operation's hash, or why it failed (a run that failed or ran out of budget: its status). */
function childOutcome(e: ChildEndEvent) {
  const out = (e.output && typeof e.output === 'object' ? e.output : {}) as { txHash?: string | null; error?: { code: string; message: string } | null }
  return e.type === 'child.done'
    ? { outcome: 'ok' as const, txHash: out.txHash ?? null }
    : { outcome: 'failed' as const, txHash: out.txHash ?? null, reason: out.error ? `${out.error.code}: ${out.error.message}` : `${e.status}: ${e.childId} ended ${e.status}` }
}

/**
 * An automation (DCA, limit order, sniper, or any trigger and action): `armed` -> `executing`
 * (firing n: its action runs as the effect `automation.fire`, a swap as the automation's child
 * keyed by (automation, n)) -> `armed` ..., `paused`, `error` (after `maxFailures` failed
 * firings in a row), `completed` or `cancelled` (final). Interval and schedule triggers are one
 * durable timer (`automation.due`) on the automation's own grid; a timer firing moves
 * `nextRunAt` past the tick it serves as it starts. After downtime an overdue tick fires once
 * (`catchUp: once`) or is skipped (`skip`), never once per missed tick. Triggers that arrive
 * while a firing runs wait (up to PENDING_MAX) and fire after it, one at a time. Time comes in
 * the events (`at`, see `parseEvent`): transitions are pure and replay the same.
 */
export const automationMachine = setup({
  types: { context: {} as AutomationContext, events: {} as AutomationEvent, input: {} as AutomationInput },
  actions: { [AUTOMATION_FIRE]: (_, _p: FireParams) => {} },
  guards: {
    suspended: ({ context }) => context.suspended,
    timed: ({ context }) => isTimed(context),
    // A timer heard before its time (a v1 timer of a grid moved since, or clocks apart): armed again.
    early: ({ context, event }) => timeOf(context, event) < Date.parse(context.nextRunAt ?? ''),
    skipLate: ({ context, event }) => context.catchUp === 'skip' && missedTicks(context, timeOf(context, event)),
    expired: ({ context, event }) => doneReason(context, timeOf(context, event)) === 'expired',
  },
}).createMachine({
  id: 'automation',
  initial: 'armed',
  context: ({ input }) => ({
    ...input,
    firingNumber: 0, runCount: 0, failuresInRow: 0, lastTriggeredAt: null, lastError: null, firings: [], current: null, earlyEnd: null,
    pending: [], pauseRequested: false, cancelRequested: false, suspended: false, completedReason: null, lastTimerAt: null,
    nextRunAt: input.trigger.type === 'interval' ? (input.trigger.startAt ?? input.createdAt) : input.trigger.type === 'schedule' ? input.trigger.scheduledAt : null,
    ...(input.trigger.type === 'trailing_stop' ? { high: input.order?.armedPriceUsd ?? null } : {}),
  }),
  on: {
    'automation.cancel': [
      { guard: ({ context }) => context.current !== null, actions: assign({ cancelRequested: true }) },
      { target: '.cancelled' },
    ],
    'automation.update': { actions: assign(({ context, event }) => applyChanges(context, event.changes as AutomationChanges, timeOf(context, event))) },
  },
  states: {
    armed: {
      initial: 'route',
      on: {
        'automation.trigger': { target: 'executing', actions: assign({ current: ({ context, event }) => startOf(context, event.source) }) },
        // A block's price: a trailing stop's new high, or its level or a bracket's side reached (a firing).
        'automation.price': [
          {
            guard: ({ context, event }) => priceFiring(context, event).fires !== null,
            target: 'executing',
            actions: assign(({ context, event }) => {
              const p = priceFiring(context, event)
              return { ...p.changes, current: startOf(context, p.fires!) }
            }),
          },
          { actions: assign(({ context, event }) => priceFiring(context, event).changes) },
        ],
        'automation.pause': 'paused',
        // A changed trigger takes effect at once: the timer is set again from the new parameters.
        'automation.update': { target: 'armed', reenter: true, actions: assign(({ context, event }) => applyChanges(context, event.changes as AutomationChanges, timeOf(context, event))) },
      },
      states: {
        route: {
          always: [
            { guard: 'expired', target: '#automation.completed', actions: assign({ completedReason: 'expired' }) },
            { guard: 'suspended', target: 'suspended' },
            { guard: 'timed', target: 'timed' },
            { target: 'listening' },
          ],
        },
        timed: {
          entry: enqueueActions(({ context, event, enqueue }) => {
            enqueue.raise({ type: AUTOMATION_DUE }, { id: AUTOMATION_DUE, delay: Math.max(0, Date.parse(context.nextRunAt ?? '') - timeOf(context, event) || 0) })
          }),
          exit: cancel(AUTOMATION_DUE),
          on: {
            // Past an `endAt`, it completes; heard early, it is armed again; missed whole periods
            // under `skip`, no firing, the next tick on the grid; else one firing, for the latest
            // tick due (a catch-up when ticks were missed: never one per missed tick).
            [AUTOMATION_DUE]: [
              { guard: 'expired', target: '#automation.completed', actions: assign({ completedReason: 'expired' }) },
              { guard: 'early', target: 'timed', reenter: true },
              { guard: 'skipLate', target: 'timed', reenter: true, actions: assign(({ context, event }) => ({ nextRunAt: nextTick(context, timeOf(context, event)) })) },
              { target: '#automation.executing', actions: assign(({ context, event }) => timerFiring(context, timeOf(context, event))) },
            ],
          },
        },
        listening: {},
        suspended: {
          // The agent runs again: an overdue tick fires once now (`once`), or waits for the next one (`skip`).
          on: { 'automation.agentStarted': { target: 'route', actions: assign({ suspended: false }) } },
        },
      },
    },
    executing: {
      entry: enqueueActions(({ context, event, enqueue }) => {
        const cur = context.current!
        const slice = sliceOf(context)
        const leader = cur.source.source === 'leader_swap' ? { lastLeaderSwap: cur.source.swap } : {}
        enqueue.assign({ firingNumber: cur.number, lastTriggeredAt: iso(timeOf(context, event)), ...(slice ? { current: { ...cur, slice } } : {}), ...leader })
        enqueue({ type: AUTOMATION_FIRE, params: { number: cur.number, source: cur.source, ...(slice ? { slice } : {}) } })
      }),
      on: {
        'automation.trigger': {
          guard: ({ context }) => pendingRoom(context),
          actions: assign({ pending: ({ context, event }) => [...context.pending, event.source] }),
        },
        'automation.pause': { actions: assign({ pauseRequested: true }) },
        'fire.done': {
          target: 'settling',
          actions: assign(({ context, event }) => recordEnd({ ...context, current: { ...context.current!, childId: event.runId ?? context.current!.childId } }, timeOf(context, event), { outcome: 'ok' })),
        },
        'fire.failed': { target: 'settling', actions: assign(({ context, event }) => recordEnd(context, timeOf(context, event), { outcome: 'failed', reason: `${event.code}: ${event.reason}`, refusal: event.refusal === true })) },
        'fire.skipped': { target: 'settling', actions: assign(({ context, event }) => recordEnd(context, timeOf(context, event), { outcome: 'skipped', reason: event.reason, counted: event.counted === true })) },
        'automation.fire.failed': { target: 'settling', actions: assign(({ context, event }) => recordEnd(context, timeOf(context, event), { outcome: 'failed', reason: `firing_failed: ${event.error}` })) },
        'fire.started': [
          {
            guard: ({ context, event }) => context.earlyEnd?.childId === event.childId,
            target: 'settling',
            actions: assign(({ context, event }) => recordEnd({ ...context, current: { ...context.current!, childId: event.childId } }, timeOf(context, event), childOutcome(context.earlyEnd!))),
          },
          { actions: assign({ current: ({ context, event }) => ({ ...context.current!, childId: event.childId, result: event.result }) }) },
        ],
        // The end of the firing's child (a swap): matched by its id; one that came first is kept for the report.
        'child.*': [
          {
            guard: ({ context, event }) => isChildEnd(event) && context.current?.childId === event.childId,
            target: 'settling',
            actions: assign(({ context, event }) => recordEnd(context, timeOf(context, event), childOutcome(event as ChildEndEvent))),
          },
          { guard: ({ event }) => isChildEnd(event), actions: assign({ earlyEnd: ({ event }) => event as ChildEndEvent }) },
        ],
      },
    },
    // The grid moved on when the firing started: whichever way it ends, nothing here touches `nextRunAt`.
    settling: {
      always: [
        { guard: ({ context }) => context.cancelRequested, target: 'cancelled' },
        {
          guard: ({ context, event }) => doneReason(context, timeOf(context, event)) !== null,
          target: 'completed',
          actions: assign({ completedReason: ({ context, event }) => doneReason(context, timeOf(context, event)) }),
        },
        { guard: ({ context }) => context.failuresInRow >= context.maxFailures, target: 'error' },
        { guard: ({ context }) => context.pauseRequested, target: 'paused', actions: assign({ pauseRequested: false }) },
        {
          guard: ({ context }) => context.pending.length > 0,
          target: 'executing',
          actions: assign(({ context }) => ({ current: startOf(context, context.pending[0]!), pending: context.pending.slice(1) })),
        },
        { target: 'armed' },
      ],
    },
    // Resumed: ticks that came due while paused follow the catch-up rule (one catch-up firing under `once`).
    paused: {
      on: {
        'automation.resume': { target: 'armed', actions: assign({ suspended: false }) },
        'automation.pause': {},
      },
    },
    error: {
      on: { 'automation.resume': { target: 'armed', actions: assign({ failuresInRow: 0, suspended: false }) } },
    },
    completed: { type: 'final' },
    cancelled: { type: 'final' },
  },
})

/** The firing to start next: its number and what fired it. */
function startOf(c: AutomationContext, s: FiringSource): NonNullable<AutomationContext['current']> {
  return { number: c.firingNumber + 1, source: s, childId: null, result: null }
}

const isChildEnd = (e: { type: string }): e is ChildEndEvent => e.type === 'child.done' || e.type === 'child.failed'

/**
 * A PATCH's changes (at `at`). A new interval's grid starts at its `startAt`, else now, or one
 * period on when a timer firing started less than a period ago (a PATCH never fires the timer
 * twice within the new interval). A timer firing in flight then serves no tick of the old grid.
 */
function applyChanges(c: AutomationContext, changes: AutomationChanges, at: number): Partial<AutomationContext> {
  const next: Partial<AutomationContext> = { ...changes }
  if (changes.trigger) {
    const t = changes.trigger
    const every = t.type === 'interval' ? t.everySeconds * 1000 : 0
    const recent = !!c.lastTimerAt && at - Date.parse(c.lastTimerAt) < every
    next.nextRunAt = t.type === 'interval' ? (t.startAt ?? iso(recent ? at + every : at)) : t.type === 'schedule' ? t.scheduledAt : null
    if (c.current?.tick) next.current = { ...c.current, tick: undefined }
  }
  return next
}

export const AUTOMATION_FINAL = new Set(['completed', 'cancelled'])

export const automationKind: ActorKind = {
  kind: 'automation',
  machine: automationMachine,
  // 2: the timer is `automation.due`, time comes in the events, the grid moves as a timer firing starts.
  machineVersion: 2,
  migrate: migrateAutomationSnapshot,
  renamedTimers: { [LEGACY_DUE]: AUTOMATION_DUE },
  /**
   * The event as the machine takes it, stamped with `at`: when the runtime takes it in (a child's
   * end keeps the time it ended). The stamped event is the one journaled, so a replay is the same.
   */
  parseEvent(event: unknown): AnyEventObject {
    const parsed = automationEventSchema.safeParse(event)
    if (!parsed.success) throw new ValidationError({ type: 'unknown automation event' })
    const at = (parsed.data as { at?: string }).at
    return { ...parsed.data, at: at && !Number.isNaN(Date.parse(at)) ? at : new Date().toISOString() }
  },
  // `armed.timed` -> `armed`, `settling` (never committed as a resting state) -> `executing`.
  statusOf: (s: AnyMachineSnapshot) => {
    const top = typeof s.value === 'string' ? s.value : Object.keys(s.value)[0]!
    return top === 'settling' ? 'executing' : top
  },
  effects: [AUTOMATION_FIRE],
  // `maxFailures` failed firings in a row: it waits for a resume (`completed` with a reason is no failure).
  failureStates: ['error'],
}
