import { assign, cancel, enqueueActions, raise, setup, type AnyEventObject, type AnyMachineSnapshot } from 'xstate'
import { z } from 'zod'
import { ValidationError } from '../../domain/errors.ts'
import { LISTED } from '../../domain/agents/listedAgent.ts'
import type { ActorKind } from '../runtime/index.ts'
import { childEndEventSchema } from '../runtime/index.ts'

/** The pause reason of an agent listed on the market. */
export { LISTED }

/** A schedule check of a running agent: start a run if one is due, and say when the next is (agentRuns.effect.ts). */
export const AGENT_RUN_DUE = 'agent.runDue'
/** On stop, pause or delete: the agent's run in progress ends `stopped`, if it was created before that commit (agentRuns.effects.ts). */
export const AGENT_STOP_RUNS = 'agent.stopRuns'
/** On start: the agent's automations that missed a firing while it was not running hear it runs again; on delete: they are cancelled. */
export const AGENT_AUTOMATIONS = 'agent.automations' as const
const automationsHear = (signal: 'agentStarted' | 'cancel') => ({ type: AGENT_AUTOMATIONS, params: { signal } }) as const
/** An automation of the agent skipped a firing because the agent was not running: it waits to hear the agent runs again. */
export const AUTOMATIONS_WAITING = 'agent.automations.waiting'

/** On start: the automations that may wait for the agent to run again hear it (none: nothing is written for them). */
function tellWaitingAutomations({ context, enqueue }: {
  context: AgentContext
  enqueue: { (action: ReturnType<typeof automationsHear>): void; assign(values: Partial<AgentContext>): void }
}) {
  if (context.automationsWaiting === false) return
  enqueue.assign({ automationsWaiting: false })
  enqueue(automationsHear('agentStarted'))
}

/** A sale on the market: the agent becomes the buyer's (`accountId`), stopped, with no run interval and no automation waiting. */
export const MARKET_SOLD = 'market.sold'

/**
 * A sale: a listed agent is paused, but whatever its live state, it ends stopped under the
 * buyer's account with no schedule (the buyer sets one) and no automation of the seller's waiting.
 */
function marketSold({ event, enqueue }: {
  event: { type: string; accountId?: string }
  enqueue: { cancel(id: string): void; assign(values: Partial<AgentContext>): void }
}) {
  if (event.type !== MARKET_SOLD || !event.accountId) return
  enqueue.cancel(AGENT_DUE)
  enqueue.assign({ accountId: event.accountId, reason: null, runIntervalSeconds: 0, automationsWaiting: false })
}

/** The one durable timer of a running agent: due when its next scheduled run is. */
export const AGENT_DUE = 'agent.due'
/** The per-tick timer of machine version 1 (a stored v1 agent may still hold one): heard as AGENT_DUE (see `renamedTimers`). */
export const LEGACY_TICK = 'xstate.after.tick.agent.running'
/** A schedule check that failed (after its effect's retries) is tried again after this long. */
export const CHECK_RETRY_MS = 60_000

export type AgentMachineInput = { agentId: string; accountId: string; /** The new agent's run_interval_seconds. */ runIntervalSeconds?: number }

/** The next scheduled run as check number `check` computed it: the timer's delay (null: none) and the due time (ISO; null: none). */
const nextRun = { nextRunInMs: z.number().int().min(0).nullable().optional(), dueAt: z.string().nullable().optional(), check: z.number().int().optional() }

/** Events an agent accepts; parsed before they reach the machine. */
export const agentEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('agent.start') }),
  z.object({ type: z.literal('agent.stop') }),
  z.object({ type: z.literal('agent.pause'), reason: z.string().min(1).max(200) }),
  z.object({ type: z.literal('agent.delete') }),
  z.object({ type: z.literal(AGENT_DUE) }),
  // The agent's run_interval_seconds was changed (sent in the update's transaction).
  z.object({ type: z.literal('agent.schedule.changed') }),
  z.object({ type: z.literal(AUTOMATIONS_WAITING) }),
  // The agent was sold on the market (committed in the sale's transaction): the buyer's, stopped.
  z.object({ type: z.literal(MARKET_SOLD), listingId: z.string().min(1), accountId: z.string().min(1) }),
  // A run of the agent ended (a run is the agent's child).
  childEndEventSchema.extend({ type: z.literal('child.done') }),
  childEndEventSchema.extend({ type: z.literal('child.failed') }),
  // What a schedule check did (journaled); it carries the agent's current run interval and its next run.
  z.object({ type: z.literal('agent.run.started'), effectId: z.string(), runId: z.string(), runIntervalSeconds: z.number().int(), ...nextRun }),
  z.object({ type: z.literal('agent.run.skipped'), effectId: z.string(), reason: z.string(), runIntervalSeconds: z.number().int(), ...nextRun }),
  z.object({ type: z.enum([`${AGENT_RUN_DUE}.failed`, `${AGENT_STOP_RUNS}.failed`, `${AGENT_AUTOMATIONS}.failed`]), effectId: z.string(), error: z.string() }),
])
export type AgentEvent = z.infer<typeof agentEventSchema>

export type AgentContext = {
  agentId: string
  accountId: string
  reason: string | null
  /** Schedule checks asked for since the agent was created: the number of the latest, whose outcome alone re-arms the timer. */
  checks: number
  /**
   * The agent's run_interval_seconds as it was created or as the last schedule check saw it; null
   * (or absent, in agents stored before it was kept) when a change since is not checked yet.
   */
  runIntervalSeconds?: number | null
  /** Whether an automation may wait to hear that the agent runs again (absent in agents stored before it was kept: assume so). */
  automationsWaiting?: boolean
  /** When the next scheduled run is due, as the last check computed it (ISO; null: none). A run ending at or after it calls for a check. */
  dueAt?: string | null
}

/** A run ended once its agent's next run was due (a check then met it in progress, or is about to). */
function endedWhenDue(context: AgentContext, event: AgentEvent): boolean {
  if (event.type !== 'child.done' && event.type !== 'child.failed') return false
  if (context.runIntervalSeconds === 0 || !context.dueAt) return false
  return !event.at || Date.parse(event.at) >= Date.parse(context.dueAt)
}

/**
 * An agent: `stopped` -> `running` <-> `paused`, and `deleted` (final) from any of them.
 * A running agent holds at most one durable timer (`agent.due`), due at its next scheduled run:
 * entering `running` checks at once; each check (AGENT_RUN_DUE) answers with the next due time,
 * and the timer is re-armed to it (none while the run interval is 0). A due time passed while
 * the service was down fires once. A check that meets a run in progress re-arms a fallback one
 * interval away and checks again as soon as that run ends (the check asks the run to tell the
 * agent, and its end reaches the agent in the run's own commit); a change of the run interval
 * checks again at once.
 */
export const agentMachine = setup({
  types: {
    context: {} as AgentContext,
    events: {} as AgentEvent,
    input: {} as AgentMachineInput,
  },
  actions: {
    [AGENT_RUN_DUE]: (_, _p: { check: number }) => {},
    [AGENT_STOP_RUNS]: () => {},
    [AGENT_AUTOMATIONS]: (_, _p: { signal: 'agentStarted' | 'cancel' }) => {},
  },
}).createMachine({
  id: 'agent',
  initial: 'stopped',
  context: ({ input }) => ({
    agentId: input.agentId, accountId: input.accountId, reason: null, checks: 0,
    runIntervalSeconds: input.runIntervalSeconds ?? null, automationsWaiting: false,
  }),
  states: {
    stopped: {
      entry: assign({ reason: null }),
      on: {
        [MARKET_SOLD]: { actions: enqueueActions(marketSold) },
        'agent.start': { target: 'running', actions: enqueueActions(tellWaitingAutomations) },
        'agent.delete': 'deleted',
        'agent.schedule.changed': { actions: assign({ runIntervalSeconds: null }) },
        [AUTOMATIONS_WAITING]: { actions: assign({ automationsWaiting: true }) },
        // A listing on the market pauses a stopped agent too (reason `listed`): a run started by
        // hand on it stops, as a running agent's would.
        'agent.pause': { target: 'paused', actions: [assign({ reason: ({ event }) => event.reason }), AGENT_STOP_RUNS] },
      },
    },
    running: {
      // A (re)started agent checks at once: a run never made, or overdue, starts now. One whose
      // interval is 0 (as created, or as its last check saw it) runs nothing on its own: no check.
      entry: enqueueActions(({ context, enqueue }) => {
        enqueue.assign({ reason: null, dueAt: null })
        if (context.runIntervalSeconds === 0) return
        enqueue.assign({ checks: context.checks + 1 })
        enqueue({ type: AGENT_RUN_DUE, params: { check: context.checks + 1 } })
      }),
      exit: cancel(AGENT_DUE),
      on: {
        [MARKET_SOLD]: { target: 'stopped', actions: enqueueActions(marketSold) },
        'agent.stop': { target: 'stopped', actions: AGENT_STOP_RUNS },
        'agent.pause': { target: 'paused', actions: [assign({ reason: ({ event }) => event.reason }), AGENT_STOP_RUNS] },
        'agent.delete': { target: 'deleted', actions: AGENT_STOP_RUNS },
        [AGENT_DUE]: { actions: [assign({ checks: ({ context }) => context.checks + 1 }), { type: AGENT_RUN_DUE, params: ({ context }) => ({ check: context.checks }) }] },
        'agent.schedule.changed': { actions: [assign({ checks: ({ context }) => context.checks + 1 }), { type: AGENT_RUN_DUE, params: ({ context }) => ({ check: context.checks }) }] },
        // It runs already: the waiting automation hears it at once.
        [AUTOMATIONS_WAITING]: { actions: automationsHear('agentStarted') },
        // A run ended (child.done / child.failed) once the next run was due: check now.
        'child.*': { guard: ({ context, event }) => endedWhenDue(context, event), actions: [assign({ dueAt: null, checks: ({ context }) => context.checks + 1 }), { type: AGENT_RUN_DUE, params: ({ context }) => ({ check: context.checks }) }] },
        // The latest check's outcome (started / skipped): re-arm the timer to the next run (none when
        // there is none). An earlier check's, overtaken by a later one (an interval change), is refused.
        'agent.run.*': {
          guard: ({ context, event }) => !('check' in event) || event.check === undefined || event.check === context.checks,
          actions: enqueueActions(({ context, event, enqueue }) => {
            if (event.type !== 'agent.run.started' && event.type !== 'agent.run.skipped') return
            enqueue.assign({ runIntervalSeconds: event.runIntervalSeconds, ...(event.dueAt !== undefined ? { dueAt: event.dueAt } : {}) })
            // An outcome from before version 2 says nothing of the next run: the timers stay as they are.
            if (event.nextRunInMs === undefined) return
            if (event.nextRunInMs === null) enqueue.cancel(AGENT_DUE)
            else enqueue.raise({ type: AGENT_DUE }, { id: AGENT_DUE, delay: event.nextRunInMs })
          }),
        },
        // A check that failed for good: try again later, so a running agent is never left without its timer.
        [`${AGENT_RUN_DUE}.failed`]: { actions: raise({ type: AGENT_DUE }, { id: AGENT_DUE, delay: CHECK_RETRY_MS }) },
      },
    },
    paused: {
      on: {
        // A listed agent starts only once its listing is cancelled (which stops it) or sold.
        'agent.start': {
          guard: ({ context }) => context.reason !== LISTED,
          target: 'running',
          actions: enqueueActions(tellWaitingAutomations),
        },
        'agent.pause': { actions: assign({ reason: ({ event }) => event.reason }) },
        [MARKET_SOLD]: { target: 'stopped', actions: enqueueActions(marketSold) },
        'agent.schedule.changed': { actions: assign({ runIntervalSeconds: null }) },
        [AUTOMATIONS_WAITING]: { actions: assign({ automationsWaiting: true }) },
        'agent.stop': { target: 'stopped', actions: AGENT_STOP_RUNS },
        'agent.delete': { target: 'deleted', actions: AGENT_STOP_RUNS },
      },
    },
    deleted: { type: 'final', entry: automationsHear('cancel') },
  },
})

/**
 * A version 1 snapshot (a fixed tick every `tickMs`, counted in `ticks`) in version 2's shape:
 * the tick's fields go. A running agent's tick still armed (LEGACY_TICK) fires once more as a
 * schedule check (AGENT_DUE, which arms the due timer), or goes when the due timer is set or
 * cancelled (`renamedTimers`).
 */
export function migrateAgentSnapshot(persisted: unknown, fromVersion: number): unknown {
  if (fromVersion !== 1) throw new Error(`no migration from agent machine version ${fromVersion}`)
  const s = persisted as { value: unknown; context: Record<string, unknown> }
  const { tickMs: _t, ticks: _n, ...context } = s.context
  return { ...s, context: { ...context, checks: 0, dueAt: null } }
}

export const agentKind: ActorKind = {
  kind: 'agent',
  machine: agentMachine,
  machineVersion: 2,
  migrate: migrateAgentSnapshot,
  renamedTimers: { [LEGACY_TICK]: AGENT_DUE },
  parseEvent(event: unknown): AnyEventObject {
    const parsed = agentEventSchema.safeParse(event)
    if (!parsed.success) throw new ValidationError({ type: 'unknown agent event' })
    return parsed.data
  },
  statusOf: (snapshot: AnyMachineSnapshot) => String(snapshot.value),
  effects: [AGENT_RUN_DUE, AGENT_STOP_RUNS, AGENT_AUTOMATIONS],
  // None: `paused` is a kill switch someone set, not a failure.
  failureStates: [],
}
