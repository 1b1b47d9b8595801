import { assign, setup, type AnyEventObject, type AnyMachineSnapshot } from 'xstate'
import { z } from 'zod'
import { ValidationError } from '../../domain/errors.ts'
import type { ActorKind } from '../runtime/index.ts'
import type { ApprovalRecord, ApprovalRequest } from '../../domain/approvals/approval.types.ts'
import { stampApprovalEvent } from './approvalStamp.ts'
import type { PolicyStamp } from '../../domain/policies/ports.ts'
import { approvalEventSchemas, awaitingApprovalState, pendingApproval } from './awaitingApproval.ts'

export type WalletOpInput = {
  opId: string
  accountId: string
  agentId: string
  /** Which planner builds the transactions: 'swap', 'transfer', 'claim', ... */
  kind: string
  /** The planner's own parameters (validated by its route; JSON only: amounts as decimal strings). */
  params: Record<string, unknown>
  /** Set when the agent's policy asks an owner to approve this move first (`awaiting_approval`). */
  approval?: ApprovalRequest | null | undefined
  /** The owners' policies' decision, made under the agent's lock when it was recorded, and the facts it was made on (docs/api.md, "Policies"). */
  policy?: PolicyStamp | undefined
}

const error = z.object({ code: z.string(), message: z.string() })

export const walletOpEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('op.submitted'), effectId: z.string(), txHash: z.string() }),
  z.object({ type: z.literal('op.confirmed'), effectId: z.string(), result: z.record(z.string(), z.unknown()) }),
  z.object({ type: z.literal('op.rejected'), effectId: z.string(), error }),
  z.object({ type: z.literal('op.submit.failed'), effectId: z.string(), error: z.string() }),
  z.object({ type: z.literal('op.confirm.failed'), effectId: z.string(), error: z.string() }),
  ...approvalEventSchemas,
])
export type WalletOpEvent = z.infer<typeof walletOpEventSchema>

export type WalletOpContext = WalletOpInput & {
  txHash: string | null
  result: Record<string, unknown> | null
  error: { code: string; message: string } | null
  approval: ApprovalRecord | null
}

/**
 * One money-moving operation from an agent wallet (swap, transfer, fee claim):
 * `submitting` -> `confirming` -> `confirmed`, or `failed`. Its transactions go through the
 * wallet's outbox under the submit effect's id, so a crash re-broadcasts, never re-signs.
 * A move above the policy's approval threshold starts in `awaiting_approval` (nothing signed,
 * no nonce taken): approved, it is submitted; rejected, or not decided before `expiresAt` (a
 * durable timer), it fails. Time comes in the events (`at`): the machine reads no clock.
 */
export const walletOpMachine = setup({
  types: {
    context: {} as WalletOpContext,
    events: {} as WalletOpEvent,
    input: {} as WalletOpInput,
  },
  actions: {
    'op.submit': (_, _p: { opId: string }) => {},
    'op.confirm': (_, _p: { opId: string; txHash: string }) => {},
  },
}).createMachine({
  id: 'walletop',
  initial: 'start',
  context: ({ input }) => ({
    ...input,
    txHash: null, result: null, error: null,
    approval: pendingApproval(input.approval),
  }),
  // What a parent (a chat turn, a run) hears in `child.done` / `child.failed`.
  output: ({ context }) => ({ txHash: context.txHash, ...(context.result ?? {}), error: context.error }),
  states: {
    start: { always: [{ guard: ({ context }) => context.approval !== null, target: 'awaiting_approval' }, { target: 'submitting' }] },
    // Approved, it is submitted with the quote re-checked at approval (a fresh deadline).
    awaiting_approval: awaitingApprovalState<WalletOpContext, WalletOpEvent>({
      approved: 'submitting', failed: 'failed', subject: 'operation',
      onApproved: (context, event) => ({ params: { ...context.params, ...event.params } }),
    }),
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
  // 2: `approval` in the context, the `awaiting_approval` state (a v1 snapshot gets `approval: null`).
  machineVersion: 2,
  migrate: (persisted: unknown, fromVersion: number) => {
    if (fromVersion !== 1) throw new Error(`no migration from wallet operation machine version ${fromVersion}`)
    const p = persisted as { context: Record<string, unknown> }
    return { ...p, context: { approval: null, ...p.context } }
  },
  /** Approval events are stamped with `at`, when the runtime takes them in (the stamped event is journaled: a replay is the same). */
  parseEvent(event: unknown): AnyEventObject {
    const parsed = walletOpEventSchema.safeParse(event)
    if (!parsed.success) throw new ValidationError({ type: 'unknown wallet operation event' })
    return stampApprovalEvent(parsed.data)
  },
  statusOf: (s: AnyMachineSnapshot) => String(s.value),
  effects: ['op.submit', 'op.confirm'],
  failureStates: ['failed'],
  persistentEffects: ['op.confirm'],
  // An approval starts the submit effect: its policy and quote are checked by the approval's use case, never by a replay.
  unsafeToReplay: ['approval.approve'],
}
