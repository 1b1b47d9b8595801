import { assign, enqueueActions, setup, type AnyEventObject, type AnyMachineSnapshot } from 'xstate'
import { z } from 'zod'
import { ValidationError } from '../domain/errors.ts'
import type { ActorKind } from './actorKind.ts'

/** On a tick of a running agent whose runs may be scheduled: start a run if one is due (agentRuns.effect.ts). */
export const AGENT_RUN_DUE = 'agent.runDue'
/** The pause reason of an agent listed on the market. */
export const LISTED = 'listed'
/** On stop or delete: the agent's run in progress ends `stopped`. */
export const AGENT_STOP_RUNS = 'agent.stopRuns'
/** On start: the agent's automations that missed a firing while it was not running hear it runs again; on delete: they are cancelled. */
export const AGENT_AUTOMATIONS = 'agent.automations' as const
const automationsHear = (signal: 'agentStarted' | 'cancel') => ({ type: AGENT_AUTOMATIONS, params: { signal } }) as const

export type AgentMachineInput = { agentId: string; accountId: string; tickMs: number }

/** Events an agent accepts; parsed before they reach the machine. */
export const agentEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('agent.start') }),
  z.object({ type: z.literal('agent.stop') }),
  z.object({ type: z.literal('agent.pause'), reason: z.string().min(1).max(200) }),
  z.object({ type: z.literal('agent.delete') }),
  z.object({ type: z.literal('agent.tick') }),
  z.object({ type: z.literal('xstate.after.tick.agent.running') }),
  // What a tick's schedule check did (journaled); it carries the agent's current run interval.
  z.object({ type: z.literal('agent.run.started'), effectId: z.string(), runId: z.string(), runIntervalSeconds: z.number().int() }),
  z.object({ type: z.literal('agent.run.skipped'), effectId: z.string(), reason: z.string(), runIntervalSeconds: z.number().int() }),
  z.object({ type: z.enum([`${AGENT_RUN_DUE}.failed`, `${AGENT_STOP_RUNS}.failed`, `${AGENT_AUTOMATIONS}.failed`]), effectId: z.string(), error: z.string() }),
])
export type AgentEvent = z.infer<typeof agentEventSchema>

/**
 * An agent: `stopped` -> `running` <-> `paused`, and `deleted` (final) from any of them.
 * While running, a durable tick fires every `tickMs`; it is what wakes the agent's
 * automations and scheduled runs. After downtime an overdue tick fires once (no catch-up
 * burst), then the period starts again.
 */
export const agentMachine = setup({
  types: {
    context: {} as {
      agentId: string
      accountId: string
      tickMs: number
      ticks: number
      reason: string | null
      /** The agent's run_interval_seconds as the last schedule check saw it (null: not checked since the start). */
      runIntervalSeconds?: number | null
    },
    events: {} as AgentEvent,
    input: {} as AgentMachineInput,
  },
  actions: {
    [AGENT_RUN_DUE]: () => {},
    [AGENT_STOP_RUNS]: () => {},
    [AGENT_AUTOMATIONS]: (_, _p: { signal: 'agentStarted' | 'cancel' }) => {},
  },
  delays: {
    tick: ({ context }) => context.tickMs,
  },
}).createMachine({
  id: 'agent',
  initial: 'stopped',
  context: ({ input }) => ({ ...input, ticks: 0, reason: null }),
  states: {
    stopped: {
      entry: assign({ reason: null }),
      on: {
        'agent.start': { target: 'running', actions: [assign({ runIntervalSeconds: null }), automationsHear('agentStarted')] },
        'agent.delete': 'deleted',
        // A listing on the market pauses a stopped agent too (reason `listed`): a run started by
        // hand on it stops, as a running agent's would.
        'agent.pause': { target: 'paused', actions: [assign({ reason: ({ event }) => event.reason }), AGENT_STOP_RUNS] },
      },
    },
    running: {
      entry: assign({ reason: null }),
      after: {
        tick: {
          target: 'running',
          reenter: true,
          actions: enqueueActions(({ context, enqueue }) => {
            enqueue.assign({ ticks: context.ticks + 1 })
            // An agent whose interval is 0 is not checked again until it is restarted.
            if (context.runIntervalSeconds !== 0) enqueue({ type: AGENT_RUN_DUE })
          }),
        },
      },
      on: {
        'agent.stop': { target: 'stopped', actions: AGENT_STOP_RUNS },
        'agent.pause': { target: 'paused', actions: [assign({ reason: ({ event }) => event.reason }), AGENT_STOP_RUNS] },
        'agent.delete': { target: 'deleted', actions: AGENT_STOP_RUNS },
        'agent.run.started': { actions: assign({ runIntervalSeconds: ({ event }) => event.runIntervalSeconds }) },
        'agent.run.skipped': { actions: assign({ runIntervalSeconds: ({ event }) => event.runIntervalSeconds }) },
      },
    },
    paused: {
      on: {
        // A listed agent starts only once its listing is cancelled (which stops it) or sold.
        'agent.start': { guard: ({ context }) => context.reason !== LISTED, target: 'running', actions: [assign({ runIntervalSeconds: null }), automationsHear('agentStarted')] },
        'agent.pause': { actions: assign({ reason: ({ event }) => event.reason }) },
        'agent.stop': { target: 'stopped', actions: AGENT_STOP_RUNS },
        'agent.delete': { target: 'deleted', actions: AGENT_STOP_RUNS },
      },
    },
    deleted: { type: 'final', entry: automationsHear('cancel') },
  },
})

export const agentKind: ActorKind = {
  kind: 'agent',
  machine: agentMachine,
  machineVersion: 1,
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
