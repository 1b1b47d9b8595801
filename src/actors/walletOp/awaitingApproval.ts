import { assign, enqueueActions, type EventObject } from 'xstate'
import { z } from 'zod'
import type { ApprovalRecord, ApprovalRequest } from '../../domain/approvals/approval.types.ts'

/** The approval's expiry: a durable timer of `awaiting_approval`. */
export const APPROVAL_EXPIRE = 'approval.expire'

const error = z.object({ code: z.string(), message: z.string() })

/** An owner's decision and the approval's expiry: events of every machine that waits in `awaiting_approval` (a wallet operation, a launch). */
export const approvalEventSchemas = [
  // An owner's decision (`by`: who), and the quote re-checked at approval: `params` to send with
  // (a fresh deadline), or `failure` (the price moved beyond the slippage) to fail with instead.
  z.object({
    type: z.literal('approval.approve'), by: z.string(), reason: z.string().nullable().optional(), at: z.string().optional(),
    params: z.record(z.string(), z.unknown()).optional(), failure: error.optional(),
  }),
  z.object({ type: z.literal('approval.reject'), by: z.string(), reason: z.string().nullable().optional(), at: z.string().optional() }),
  z.object({ type: z.literal(APPROVAL_EXPIRE), at: z.string().optional() }),
] as const
type ApproveEvent = z.infer<(typeof approvalEventSchemas)[0]>
type RejectEvent = z.infer<(typeof approvalEventSchemas)[1]>
type ExpireEvent = z.infer<(typeof approvalEventSchemas)[2]>

/** What a machine that waits for approval keeps in its context. */
export type ApprovalContext = { approval: ApprovalRecord | null; error: { code: string; message: string } | null }

/** The approval a machine starts with: the request its input carries, pending (null: none asked for). */
export const pendingApproval = (request: ApprovalRequest | null | undefined): ApprovalRecord | null =>
  request ? { ...request, status: 'pending', reason: null, decidedBy: null, decidedAt: null } : null

/** The approval decided by `e` (at its `at`, stamped as the runtime took it in). */
export function decidedApproval(a: ApprovalRecord, status: 'approved' | 'rejected', e: { by?: string; reason?: string | null | undefined; at?: string | undefined }): ApprovalRecord {
  return { ...a, status, reason: e.reason ?? null, decidedBy: e.by ?? null, decidedAt: e.at ?? null }
}

export type AwaitingApprovalOptions<TContext extends ApprovalContext> = {
  /** The state an approval leads to (the first step that signs or spends). */
  approved: string
  /** The state a rejection, an expiry or an approval whose re-checked quote failed leads to. */
  failed: string
  /** What the owner is told was not sent: "operation", "launch". */
  subject: string
  /** More of the context an approval sets (a wallet operation sends with the re-checked quote's `params`). */
  onApproved?: (context: TContext, event: ApproveEvent) => Partial<TContext>
}

/**
 * The `awaiting_approval` state of a machine that asks an owner before it moves funds (a wallet
 * operation, a launch): it arms the approval's expiry (a durable timer, `expiresAt` past
 * `requestedAt`; the machine reads no clock) and cancels it on leaving; approved, it goes on to
 * `approved` (or fails with the re-checked quote's `failure`); rejected or expired, it fails with
 * nothing sent. One definition, so both machines decide, time out and word it alike.
 *
 * @example
 * states: { awaiting_approval: awaitingApprovalState<Ctx>({ approved: 'simulating', failed: 'failed', subject: 'launch' }) }
 */
export function awaitingApprovalState<TContext extends ApprovalContext, TEvent extends EventObject>({ approved, failed, subject, onApproved }: AwaitingApprovalOptions<TContext>) {
  // Each assignment sets only `approval`, `error` and what `onApproved` gives: fields of every
  // such context, which TypeScript cannot see a generic `Partial<TContext>` holds (hence the casts).
  // `TEvent` is the machine's whole event union (xstate types a state's actions by it), of which
  // the approval events are a part.
  const decide = (context: TContext, status: 'approved' | 'rejected', e: { by?: string; reason?: string | null | undefined; at?: string | undefined }) =>
    decidedApproval(context.approval!, status, e)
  return {
    entry: enqueueActions<TContext, TEvent, undefined, TEvent, never, never, never, never, never>(({ context, enqueue }) => {
      const a = context.approval!
      enqueue.raise({ type: APPROVAL_EXPIRE } as TEvent, { id: APPROVAL_EXPIRE, delay: Math.max(0, Date.parse(a.expiresAt) - Date.parse(a.requestedAt)) })
    }),
    exit: enqueueActions<TContext, TEvent, undefined, TEvent, never, never, never, never, never>(({ enqueue }) => enqueue.cancel(APPROVAL_EXPIRE)),
    on: {
      'approval.approve': [
        {
          guard: ({ event }: { event: ApproveEvent }) => event.failure !== undefined,
          target: failed,
          actions: assign<TContext, ApproveEvent, undefined, TEvent, never>(({ context, event }) => ({ approval: decide(context, 'approved', event), error: event.failure! }) as Partial<TContext>),
        },
        {
          target: approved,
          actions: assign<TContext, ApproveEvent, undefined, TEvent, never>(({ context, event }) => ({ approval: decide(context, 'approved', event), ...onApproved?.(context, event) }) as Partial<TContext>),
        },
      ],
      'approval.reject': {
        target: failed,
        actions: assign<TContext, RejectEvent, undefined, TEvent, never>(({ context, event }) => ({
          approval: decide(context, 'rejected', event),
          error: { code: 'approval_rejected', message: `The owner rejected this ${subject}${event.reason ? `: ${event.reason}` : ''}; nothing was sent.` },
        }) as Partial<TContext>),
      },
      [APPROVAL_EXPIRE]: {
        target: failed,
        actions: assign<TContext, ExpireEvent, undefined, TEvent, never>(({ context, event }) => ({
          approval: decide(context, 'rejected', { reason: 'expired', at: event.at }),
          error: { code: 'approval_expired', message: `No one approved this ${subject} before ${context.approval!.expiresAt}; nothing was sent.` },
        }) as Partial<TContext>),
      },
    },
  }
}
