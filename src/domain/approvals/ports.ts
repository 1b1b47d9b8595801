import type { PolicyGate, PolicyStamp } from '../policies/ports.ts'
import type { ApprovalRecord } from './approval.types.ts'
import type { Recheck } from '../swaps/recheckSwap.ts'

/** A wallet operation that carries an approval, as the approval use cases read it. */
export type ApprovalOperation = {
  id: string
  accountId: string
  agentId: string
  /** `swap`, `transfer` (wallet operations), `launch` (a self-funded launch's seed). */
  kind: string
  /** The operation's own status (`awaiting_approval`, `submitting`, ..., `confirmed`, `failed`). */
  status: string
  params: Record<string, unknown>
  approval: ApprovalRecord
  txHash: string | null
  error: { code: string; message: string } | null
  /** The actor the move was made for (a chat turn, a run, an automation), when read one by one. */
  parentId?: string | null | undefined
  /** The owners' policies' decision when it was recorded, with the facts it was made on (evaluated again at approval). */
  policy?: PolicyStamp | undefined
}

/** An owner's decision as the operation's machine takes it. */
export type ApprovalDecision =
  | { type: 'approval.approve'; by: string; reason: string | null; params?: Record<string, unknown> | undefined; failure?: { code: string; message: string } | undefined }
  | { type: 'approval.reject'; by: string; reason: string | null }

export type ApprovalListQuery = { status?: string | undefined; agentId?: string | undefined; limit: number; after?: [string, string] | undefined }

export interface ApprovalOperations {
  /** The operation under `id` when it carries an approval (any account's: the caller checks the owner). */
  get(id: string): Promise<ApprovalOperation | undefined>
  /** Newest request first (then by id); `after`: the `[requestedAt, id]` of the last one of the page before. */
  list(accountId: string, query: ApprovalListQuery): Promise<ApprovalOperation[]>
  /** Sends the decision and answers the committed operation; 409 `invalid_state` when it no longer waits. */
  decide(id: string, decision: ApprovalDecision): Promise<ApprovalOperation>
}

export type ApprovalPorts = {
  operations: ApprovalOperations
  /** What is checked again at approval, per kind of operation (a swap's price); a kind without one is sent as approved. */
  recheck: Partial<Record<string, (params: Record<string, unknown>) => Promise<Recheck>>>
  /** Whether the agent's policy kill switch is on now (a move approved then fails with `policy_violation`). */
  agentPaused(accountId: string, agentId: string): Promise<boolean>
  /** Whether the account owns the agent (a list filtered by another account's agent is a 404). */
  agentOwned(accountId: string, agentId: string): Promise<boolean>
  /** The owners' policies, evaluated again at approval: a move a rule now rejects fails with `policy_violation`. */
  policies?: PolicyGate | undefined
}
