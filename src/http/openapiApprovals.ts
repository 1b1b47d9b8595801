import { decideApprovalBody, listApprovalsQuery } from '../domain/approvals/approval.schema.ts'
import type { Op } from './openapiOp.ts'

const nullable = (type: string, extra: object = {}) => ({ type: [type, 'null'], ...extra })
const error = { type: ['object', 'null'], properties: { code: { type: 'string' }, message: { type: 'string' } } }

/** An approval (docs/api.md, "Approvals"): also the `data` of `approval.requested` and `approval.decided`. */
export const approvalSchema = {
  type: 'object',
  required: ['id', 'agentId', 'kind', 'status', 'usdValue', 'thresholdUsd', 'requestedAt', 'expiresAt', 'decidedAt', 'decidedBy', 'reason', 'operation'],
  properties: {
    id: { type: 'string', description: 'The id of the wallet operation (a swap, a transfer) or the launch that waits' },
    agentId: { type: 'string', format: 'uuid' },
    kind: { enum: ['swap', 'transfer', 'launch'] },
    status: { enum: ['pending', 'approved', 'rejected'] },
    usdValue: { type: 'string' },
    thresholdUsd: { type: 'string', description: "The policy's require_approval_above_usd when it was requested" },
    requestedAt: { type: 'string', format: 'date-time' },
    expiresAt: { type: 'string', format: 'date-time', description: 'Not decided by then: rejected with reason `expired`' },
    decidedAt: nullable('string', { format: 'date-time' }),
    decidedBy: nullable('string', { description: '`key:<key id>` or `session:<address>`; null when it expired' }),
    reason: nullable('string', { description: "The decider's reason, or `expired`" }),
    rule: { type: ['object', 'null'], description: "The owner's policy rule that asked for the approval (docs/api.md, \"Policies\"); null when the guardrails' threshold did", properties: { name: { type: 'string' }, scope: { enum: ['account', 'agent'] } } },
    operation: {
      type: 'object',
      required: ['id', 'kind', 'status', 'txHash', 'error'],
      properties: {
        id: { type: 'string' },
        kind: { type: 'string' },
        status: { type: 'string', description: '`awaiting_approval`, then `submitting`, `confirming`, `confirmed` or `failed` (`approval_rejected`, `approval_expired`, `price_moved`, ...)' },
        txHash: nullable('string'),
        error,
      },
    },
  },
}

/** Human approval of money moves above the agent policy's `require_approval_above_usd`. */
export function approvalOps(): Op[] {
  return [
    {
      method: 'get', path: '/approvals', summary: "A page of the account's approvals, newest first (status=pending: those still waiting); nextCursor pages on (null on the last page)", auth: 'read', query: listApprovalsQuery,
      response: { type: 'object', required: ['approvals', 'nextCursor'], properties: { approvals: { type: 'array', items: approvalSchema }, nextCursor: nullable('string') } },
    },
    { method: 'get', path: '/approvals/{id}', summary: 'One approval', auth: 'read', response: approvalSchema },
    { method: 'post', path: '/approvals/{id}/approve', summary: 'Approve a waiting move: re-checked (kill switch, a swap\'s price), then sent or failed (`price_moved`); 409 approval_decided when decided already', auth: 'admin', body: decideApprovalBody, response: approvalSchema },
    { method: 'post', path: '/approvals/{id}/reject', summary: 'Reject a waiting move: it fails with approval_rejected, nothing sent', auth: 'admin', body: decideApprovalBody, response: approvalSchema },
  ]
}
