import { approvalFor } from '../approvals/approvalRules.ts'
import type { ApprovalRequest } from '../approvals/approval.types.ts'
import { DEFAULT_POLICY, type Policy } from '../agents/policy.ts'
import { PolicyViolationError } from '../agents/policyCheck.ts'
import { OwnerPolicyViolationError } from './errors.ts'
import type { PolicyDecision } from './ownerPolicyRules.ts'
import type { PolicyFacts, PolicyGate, PolicyGateInput, PolicyStamp } from './ports.ts'

const NO_RULE: PolicyDecision = { decision: 'guardrails', rule: null, matched: [] }

/**
 * The owners' policies' word on a money move, before anything is planned or signed: a reject
 * throws 422 `policy_violation` naming the rule; otherwise the decision (without a gate, as
 * without a policy: the guardrails decide).
 *
 * @example
 * const decision = await checkOwnerPolicies(deps.policies, { accountId, agentId, opId, parentId, facts })
 */
export async function checkOwnerPolicies(gate: PolicyGate | undefined, input: PolicyGateInput): Promise<PolicyDecision> {
  const decision = gate ? await gate.decide(input) : NO_RULE
  refuseRejected(decision)
  return decision
}

/** Throws when the decision is a reject. */
export function refuseRejected(d: PolicyDecision): void {
  if (d.decision !== 'reject' || !d.rule) return
  throw new OwnerPolicyViolationError({ rule: d.rule.name, scope: d.rule.scope, reason: d.matched[0]?.reason ?? 'matched' })
}

export const policyStamp = (d: PolicyDecision, facts: PolicyFacts): PolicyStamp => ({ decision: d.decision, rule: d.rule, facts })

/**
 * The guardrails' check of a move under the decision: an `accept` skips them but for the kill
 * switch (`paused` stops an agent whatever its policies say); any other decision keeps them. The
 * wallet operation calls it again under the agent's lock with the decision made there (`now`):
 * a policy changed in between decides.
 */
export function guardrailCheck(d: PolicyDecision, guardrails: Partial<Policy> | null | undefined, full: (spentTodayUsd: string) => void) {
  return (spentTodayUsd: string, now: PolicyDecision = d) => {
    if (now.decision !== 'accept') return full(spentTodayUsd)
    if ({ ...DEFAULT_POLICY, ...guardrails }.paused) throw new PolicyViolationError({ rule: 'paused', message: 'The agent is paused by its policy kill switch.' })
  }
}

/**
 * The approval a move waits for: a `require_approval` rule asks for one whatever the value (its
 * `rule` named, `thresholdUsd` "0"); an `accept` waives the guardrails' threshold; otherwise the
 * guardrails' `require_approval_above_usd` decides. It expires after the guardrails' `approval_ttl_seconds`.
 */
export function approvalUnder(
  d: PolicyDecision,
  guardrails: Partial<Policy> | null | undefined,
  { opId, usdValue, now }: { opId: string; usdValue: string; now: number },
): ApprovalRequest | null {
  if (d.decision === 'accept') return null
  if (d.decision !== 'require_approval' || !d.rule) return approvalFor(guardrails, { opId, usdValue, now })
  const ttl = { ...DEFAULT_POLICY, ...guardrails }.approval_ttl_seconds
  return { id: opId, usdValue, thresholdUsd: '0', rule: d.rule, requestedAt: new Date(now).toISOString(), expiresAt: new Date(now + ttl * 1000).toISOString() }
}
