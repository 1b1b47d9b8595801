import { describe, expect, it } from 'vitest'
import { OwnerPolicyViolationError } from './errors.ts'
import type { PolicyDecision } from './ownerPolicyRules.ts'
import { approvalUnder, checkOwnerPolicies, guardrailCheck } from './policyGate.ts'
import type { PolicyGate, PolicyGateInput } from './ports.ts'

const rule = { name: 'r', scope: 'agent' as const }
const d = (decision: PolicyDecision['decision']): PolicyDecision =>
  decision === 'guardrails' ? { decision, rule: null, matched: [] } : { decision, rule, matched: [{ rule: 'r', scope: 'agent', action: decision, reason: 'USD value gt 5' }] }
const input: PolicyGateInput = { accountId: 'a', agentId: 'g', opId: 'op', facts: { kind: 'swap', tokensIn: [], tokensOut: [], usdValue: '10' } }
const gate = (decision: PolicyDecision): PolicyGate => ({ decide: async () => decision })
const NOW = Date.parse('2026-12-07T12:00:00Z')

describe('checkOwnerPolicies', () => {
  it('throws 422 policy_violation naming the rule for a reject, answers any other decision, and the guardrails without a gate', async () => {
    const err = await checkOwnerPolicies(gate(d('reject')), input).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(OwnerPolicyViolationError)
    expect(err).toMatchObject({ status: 422, code: 'policy_violation', rule: 'r', scope: 'agent', message: 'Rejected by the agent policy\'s rule "r" (USD value gt 5).' })
    expect((await checkOwnerPolicies(gate(d('accept')), input)).decision).toBe('accept')
    expect(await checkOwnerPolicies(undefined, input)).toEqual({ decision: 'guardrails', rule: null, matched: [] })
  })
})

describe('guardrailCheck', () => {
  const full = () => {
    throw new Error('cap')
  }
  it('keeps the guardrails unless a rule accepts; an accept keeps only the kill switch', () => {
    expect(() => guardrailCheck(d('guardrails'), {}, full)('0')).toThrow('cap')
    expect(() => guardrailCheck(d('require_approval'), {}, full)('0')).toThrow('cap')
    // Under the lock the decision made there wins: an accept withdrawn meanwhile brings the guardrails back.
    expect(() => guardrailCheck(d('accept'), {}, full)('0', d('guardrails'))).toThrow('cap')
    expect(() => guardrailCheck(d('guardrails'), {}, full)('0', d('accept'))).not.toThrow()
    expect(() => guardrailCheck(d('accept'), { paused: false }, full)('0')).not.toThrow()
    expect(() => guardrailCheck(d('accept'), { paused: true }, full)('0')).toThrow(expect.objectContaining({ code: 'policy_violation', rule: 'paused' }))
  })
})

describe('approvalUnder', () => {
  it('asks for an approval whatever the value under require_approval, none under accept, the threshold otherwise', () => {
    expect(approvalUnder(d('require_approval'), { approval_ttl_seconds: 60 }, { opId: 'op', usdValue: '1.00', now: NOW })).toEqual({
      id: 'op', usdValue: '1.00', thresholdUsd: '0', rule, requestedAt: '2026-12-07T12:00:00.000Z', expiresAt: '2026-12-07T12:01:00.000Z',
    })
    expect(approvalUnder(d('accept'), { require_approval_above_usd: '0' }, { opId: 'op', usdValue: '5', now: NOW })).toBeNull()
    expect(approvalUnder(d('guardrails'), { require_approval_above_usd: '2' }, { opId: 'op', usdValue: '5', now: NOW })).toMatchObject({ thresholdUsd: '2' })
    expect(approvalUnder(d('guardrails'), {}, { opId: 'op', usdValue: '5', now: NOW })).toBeNull()
  })
})
