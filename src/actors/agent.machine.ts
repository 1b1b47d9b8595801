import { assign, setup, type AnyEventObject, type AnyMachineSnapshot } from 'xstate'
import { z } from 'zod'
import { ValidationError } from '../domain/errors.ts'
import type { ActorKind } from './actorKind.ts'

export type AgentMachineInput = { agentId: string; accountId: string; tickMs: number }

/** Events an agent accepts; parsed before they reach the machine. */
export const agentEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('agent.start') }),
  z.object({ type: z.literal('agent.stop') }),
  z.object({ type: z.literal('agent.pause'), reason: z.string().min(1).max(200) }),
  z.object({ type: z.literal('agent.delete') }),
  z.object({ type: z.literal('agent.tick') }),
  z.object({ type: z.literal('xstate.after.tick.agent.running') }),
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
    },
    events: {} as AgentEvent,
    input: {} as AgentMachineInput,
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
      on: { 'agent.start': 'running', 'agent.delete': 'deleted' },
    },
    running: {
      entry: assign({ reason: null }),
      after: {
        tick: { target: 'running', reenter: true, actions: assign({ ticks: ({ context }) => context.ticks + 1 }) },
      },
      on: {
        'agent.stop': 'stopped',
        'agent.pause': { target: 'paused', actions: assign({ reason: ({ event }) => event.reason }) },
        'agent.delete': 'deleted',
      },
    },
    paused: {
      on: { 'agent.start': 'running', 'agent.stop': 'stopped', 'agent.delete': 'deleted' },
    },
    deleted: { type: 'final' },
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
  effects: [],
}
