import { ownerPolicySchema } from '../domain/policies/ownerPolicy.schema.ts'
import type { Op } from './openapiOp.ts'

const nullable = (type: string, extra: object = {}) => ({ type: [type, 'null'], ...extra })
const rules = { type: 'array', items: { type: 'object', required: ['name', 'action', 'criteria'], properties: { name: { type: 'string' }, action: { enum: ['reject', 'require_approval', 'accept'] }, criteria: { type: 'array', items: { type: 'object' } } } } }

/** An owner's policy as answered (docs/api.md, "Policies"). */
export const ownerPolicyResponse = {
  type: 'object',
  required: ['scope', 'agentId', 'rules', 'pending', 'updatedAt'],
  properties: {
    scope: { enum: ['account', 'agent'] },
    agentId: nullable('string', { format: 'uuid' }),
    rules,
    pending: {
      type: ['object', 'null'],
      description: 'A loosening waiting for the hold (WHITELIST_HOLD_SECONDS): the whole policy that applies at effectiveAt',
      required: ['rules', 'effectiveAt'],
      properties: { rules, effectiveAt: { type: 'string', format: 'date-time' } },
    },
    updatedAt: nullable('string', { format: 'date-time' }),
  },
}

/** Owners' policies: the account's and each agent's rules over every money move. */
export function policyOps(): Op[] {
  const put = 'Replace the policy (at most 100 rules): a tightening applies at once, a loosening waits for the hold and is journaled; 422 names a bad field'
  return [
    { method: 'get', path: '/policies/account', summary: "The account's policy, applied to every agent of the account before the agent's own", auth: 'admin', response: ownerPolicyResponse },
    { method: 'put', path: '/policies/account', summary: put, auth: 'admin', body: ownerPolicySchema, response: ownerPolicyResponse },
    { method: 'get', path: '/agents/{id}/policy', summary: "The agent's own policy (evaluated after the account's)", auth: 'admin', response: ownerPolicyResponse },
    { method: 'put', path: '/agents/{id}/policy', summary: put, auth: 'admin', body: ownerPolicySchema, response: ownerPolicyResponse },
  ]
}
