import { ownerPolicySchema } from '../domain/policies/ownerPolicy.schema.ts'
import { simulatePolicyBody } from '../domain/policies/simulatePolicy.ts'
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

const decided = { type: ['object', 'null'], properties: { name: { type: 'string' }, scope: { enum: ['account', 'agent'] } } }
const simulationResponse = {
  type: 'object',
  required: ['decision', 'rule', 'matched', 'operation'],
  properties: {
    decision: { enum: ['reject', 'require_approval', 'accept', 'guardrails'], description: '`guardrails`: no rule matched, the agent\'s guardrails decide' },
    rule: decided,
    matched: {
      type: 'array',
      items: { type: 'object', required: ['rule', 'scope', 'action', 'reason'], properties: { rule: { type: 'string' }, scope: { enum: ['account', 'agent'] }, action: { enum: ['reject', 'require_approval', 'accept'] }, reason: { type: 'string' } } },
    },
    operation: { type: 'object', description: 'What the policies were shown: kind, tokensIn, tokensOut, destination, usdValue, priceImpactBps' },
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
    { method: 'post', path: '/policies/simulate', summary: 'A dry run of the account\'s and the agent\'s policies on an operation: the decision and every rule that matched, with its scope and why; nothing reserved or sent', auth: 'admin', body: simulatePolicyBody, response: simulationResponse },
  ]
}
