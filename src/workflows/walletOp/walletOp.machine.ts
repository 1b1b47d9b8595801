import { assign, setup, type AnyEventObject, type AnyMachineSnapshot } from 'xstate'
import { z } from 'zod'
import { ValidationError } from '../../domain/errors.ts'
import type { ActorKind } from '../../runtime/actorKind.ts'

export type WalletOpInput = {
  opId: string
  accountId: string
  agentId: string
  /** Which planner builds the transactions: 'swap', 'transfer', 'claim', ... */
  kind: string
  /** The planner's own parameters (validated by its route; JSON only: amounts as decimal strings). */
  params: Record<string, unknown>
}

const error = z.object({ code: z.string(), message: z.string() })

export const walletOpEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('op.submitted'), effectId: z.string(), txHash: z.string() }),
  z.object({ type: z.literal('op.confirmed'), effectId: z.string(), result: z.record(z.string(), z.unknown()) }),
  z.object({ type: z.literal('op.rejected'), effectId: z.string(), error }),
  z.object({ type: z.literal('op.submit.failed'), effectId: z.string(), error: z.string() }),
  z.object({ type: z.literal('op.confirm.failed'), effectId: z.string(), error: z.string() }),
])
export type WalletOpEvent = z.infer<typeof walletOpEventSchema>

/**
 * One money-moving operation from an agent wallet (swap, transfer, fee claim):
 * `submitting` -> `confirming` -> `confirmed`, or `failed`. Its transactions go through the
 * wallet's outbox under the submit effect's id, so a crash re-broadcasts, never re-signs.
 */
export const walletOpMachine = setup({
  types: {
    context: {} as WalletOpInput & {
      txHash: string | null
      result: Record<string, unknown> | null
      error: { code: string; message: string } | null
    },
    events: {} as WalletOpEvent,
    input: {} as WalletOpInput,
  },
  actions: {
    'op.submit': (_, _p: { opId: string }) => {},
    'op.confirm': (_, _p: { opId: string; txHash: string }) => {},
  },
}).createMachine({
  id: 'walletop',
  initial: 'submitting',
  context: ({ input }) => ({ ...input, txHash: null, result: null, error: null }),
  // What a parent (a chat turn, a run) hears in `child.done` / `child.failed`.
  output: ({ context }) => ({ txHash: context.txHash, ...(context.result ?? {}), error: context.error }),
  states: {
    submitting: {
      entry: { type: 'op.submit', params: ({ context }) => ({ opId: context.opId }) },
      on: {
        'op.submitted': { target: 'confirming', actions: assign({ txHash: ({ event }) => event.txHash }) },
        'op.rejected': { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
        'op.submit.failed': { target: 'failed', actions: assign({ error: ({ event }) => ({ code: 'submit_failed', message: event.error }) }) },
      },
    },
    confirming: {
      entry: { type: 'op.confirm', params: ({ context }) => ({ opId: context.opId, txHash: context.txHash ?? '' }) },
      on: {
        'op.confirmed': { target: 'confirmed', actions: assign({ result: ({ event }) => event.result }) },
        'op.rejected': { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
        'op.confirm.failed': { target: 'failed', actions: assign({ error: ({ event }) => ({ code: 'confirmation_failed', message: event.error }) }) },
      },
    },
    confirmed: { type: 'final' },
    failed: { type: 'final' },
  },
})

export const walletOpKind: ActorKind = {
  kind: 'walletop',
  machine: walletOpMachine,
  machineVersion: 1,
  parseEvent(event: unknown): AnyEventObject {
    const parsed = walletOpEventSchema.safeParse(event)
    if (!parsed.success) throw new ValidationError({ type: 'unknown wallet operation event' })
    return parsed.data
  },
  statusOf: (s: AnyMachineSnapshot) => String(s.value),
  effects: ['op.submit', 'op.confirm'],
  failureStates: ['failed'],
  persistentEffects: ['op.confirm'],
}
