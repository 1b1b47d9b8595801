import { assign, setup, type AnyEventObject, type AnyMachineSnapshot } from 'xstate'
import { z } from 'zod'
import { ValidationError } from '../../domain/errors.ts'
import type { ActorKind } from '../runtime/index.ts'
import type { LaunchInput } from '../../domain/launches/launch.schema.ts'
import type { ApprovalRecord } from '../../domain/approvals/approval.types.ts'
import { approvalEventSchemas, awaitingApprovalState, pendingApproval } from '../walletOp/awaitingApproval.ts'
import { stampApprovalEvent } from '../walletOp/approvalStamp.ts'

const error = z.object({ code: z.string(), message: z.string() })
/** What the PnL ledger counts of a confirmed launch (src/actors/launch/launch.effects.ts launchLedger). */
const launchLedger = z.object({ gasWei: z.string(), gasUsd: z.string().optional(), allocation: z.string(), seed: z.object({ token: z.string(), amount: z.string() }).nullable() })
export type LaunchLedger = z.infer<typeof launchLedger>

export const launchEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('launch.begin') }),
  z.object({ type: z.literal('launch.simulated'), effectId: z.string(), gas: z.string() }),
  z.object({ type: z.literal('launch.submitted'), effectId: z.string(), txHash: z.string() }),
  z.object({
    type: z.literal('launch.confirmed'),
    effectId: z.string(),
    tokenAddress: z.string(),
    poolAddress: z.string().nullable(),
    blockNumber: z.string(),
    ledger: launchLedger.optional(),
  }),
  z.object({ type: z.literal('launch.rejected'), effectId: z.string(), error }),
  z.object({ type: z.literal('launch.simulate.failed'), effectId: z.string(), error: z.string() }),
  z.object({ type: z.literal('launch.submit.failed'), effectId: z.string(), error: z.string() }),
  z.object({ type: z.literal('launch.confirm.failed'), effectId: z.string(), error: z.string() }),
  ...approvalEventSchemas,
])
export type LaunchEvent = z.infer<typeof launchEventSchema>

type Ctx = LaunchInput & {
  gas: string | null
  txHash: string | null
  tokenAddress: string | null
  poolAddress: string | null
  blockNumber: string | null
  /** What the PnL ledger counts (src/domain/wallet/pnlRules.ts): gas paid, the creator allocation received, the seed spent. */
  ledger?: LaunchLedger | null
  error: { code: string; message: string } | null
  /** Set when the agent's policy asks an owner to approve the seed first (`awaiting_approval`). */
  approval: ApprovalRecord | null
}

/**
 * A launch: `pending` -> `simulating` -> `submitting` -> `confirming` -> `live`, or `failed`.
 * Each step is an effect run after commit: the simulation, the signed-and-stored transaction
 * (re-broadcast, never re-signed, after a crash), and the wait for its receipt. A launch whose
 * seed is above the policy's approval threshold goes from `pending` to `awaiting_approval`
 * (nothing simulated or signed): approved, it is simulated and sent; rejected, or not decided
 * before `expiresAt` (a durable timer), it fails, as a wallet operation does.
 */
export const launchMachine = setup({
  types: {
    context: {} as Ctx,
    events: {} as LaunchEvent,
    input: {} as LaunchInput,
  },
  actions: {
    'launch.simulate': (_, _p: { launchId: string }) => {},
    'launch.submit': (_, _p: { launchId: string }) => {},
    'launch.confirm': (_, _p: { launchId: string; txHash: string }) => {},
  },
}).createMachine({
  id: 'launch',
  initial: 'pending',
  context: ({ input }) => ({
    ...input,
    gas: null,
    txHash: null,
    tokenAddress: null,
    poolAddress: null,
    blockNumber: null,
    error: null,
    approval: pendingApproval(input.approval),
  }),
  // What a parent (a chat turn, a run) hears in `child.done` / `child.failed`.
  output: ({ context }) => ({ tokenAddress: context.tokenAddress, poolAddress: context.poolAddress, txHash: context.txHash, error: context.error }),
  states: {
    pending: { on: { 'launch.begin': [{ guard: ({ context }) => context.approval !== null, target: 'awaiting_approval' }, { target: 'simulating' }] } },
    awaiting_approval: awaitingApprovalState<Ctx, LaunchEvent>({ approved: 'simulating', failed: 'failed', subject: 'launch' }),
    simulating: {
      entry: { type: 'launch.simulate', params: ({ context }) => ({ launchId: context.launchId }) },
      on: {
        'launch.simulated': { target: 'submitting', actions: assign({ gas: ({ event }) => event.gas }) },
        'launch.rejected': { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
        'launch.simulate.failed': { target: 'failed', actions: assign({ error: ({ event }) => ({ code: 'simulation_failed', message: event.error }) }) },
      },
    },
    submitting: {
      entry: { type: 'launch.submit', params: ({ context }) => ({ launchId: context.launchId }) },
      on: {
        'launch.submitted': { target: 'confirming', actions: assign({ txHash: ({ event }) => event.txHash }) },
        'launch.rejected': { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
        'launch.submit.failed': { target: 'failed', actions: assign({ error: ({ event }) => ({ code: 'submit_failed', message: event.error }) }) },
      },
    },
    confirming: {
      entry: {
        type: 'launch.confirm',
        params: ({ context }) => ({ launchId: context.launchId, txHash: context.txHash ?? '' }),
      },
      on: {
        'launch.confirmed': {
          target: 'live',
          actions: assign({
            tokenAddress: ({ event }) => event.tokenAddress,
            poolAddress: ({ event }) => event.poolAddress,
            blockNumber: ({ event }) => event.blockNumber,
            ledger: ({ event }) => event.ledger ?? null,
          }),
        },
        'launch.rejected': { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
        'launch.confirm.failed': { target: 'failed', actions: assign({ error: ({ event }) => ({ code: 'confirmation_failed', message: event.error }) }) },
      },
    },
    live: { type: 'final' },
    failed: { type: 'final' },
  },
})

export const launchKind: ActorKind = {
  kind: 'launch',
  machine: launchMachine,
  // 2: `approval` in the context, the `awaiting_approval` state (a v1 snapshot gets `approval: null`).
  machineVersion: 2,
  migrate: (persisted: unknown, fromVersion: number) => {
    if (fromVersion !== 1) throw new Error(`no migration from launch machine version ${fromVersion}`)
    const p = persisted as { context: Record<string, unknown> }
    return { ...p, context: { approval: null, ...p.context } }
  },
  /** Approval events are stamped with `at`, when the runtime takes them in (as a wallet operation's are). */
  parseEvent(event: unknown): AnyEventObject {
    const parsed = launchEventSchema.safeParse(event)
    if (!parsed.success) throw new ValidationError({ type: 'unknown launch event' })
    return stampApprovalEvent(parsed.data)
  },
  statusOf: (s: AnyMachineSnapshot) => String(s.value),
  effects: ['launch.simulate', 'launch.submit', 'launch.confirm'],
  failureStates: ['failed'],
  persistentEffects: ['launch.confirm'],
  // Both lead to `launch.submit` (gas, and a self-funded seed), whose policy was checked when the launch was requested.
  // An approval starts the simulation and then the submit: checked by the approval's use case, never by a replay.
  unsafeToReplay: ['launch.begin', 'launch.simulated', 'approval.approve'],
}
