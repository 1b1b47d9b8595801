import type { AuditActor } from '../agents/auditTrail.ts'
import type { OwnerPolicy } from './ownerPolicy.schema.ts'
import type { OwnerPolicyStore, PolicyTarget, StoredOwnerPolicy } from './ports.ts'

export type OwnerPolicyDeps = { policies: OwnerPolicyStore; /** WHITELIST_HOLD_SECONDS: how long a loosening waits. */ holdSeconds: number }

/** A policy as the API answers it. */
export type OwnerPolicyView = {
  scope: 'account' | 'agent'
  agentId: string | null
  rules: OwnerPolicy['rules']
  /** A loosening waiting for its hold: the whole policy that will apply at `effectiveAt`. */
  pending: { rules: OwnerPolicy['rules']; effectiveAt: string } | null
  updatedAt: string | null
}

const view = (target: PolicyTarget, s: StoredOwnerPolicy): OwnerPolicyView => ({
  scope: target.scope,
  agentId: target.scope === 'agent' ? target.agentId : null,
  rules: s.policy.rules,
  pending: s.pending && { rules: s.pending.policy.rules, effectiveAt: s.pending.effectiveAt },
  updatedAt: s.updatedAt,
})

/**
 * The account's or an agent's policy as it applies now, with a loosening still held. An agent
 * without one answers no rules. 404 when the agent is not the account's.
 *
 * @example
 * await getOwnerPolicy(deps, { scope: 'account', accountId })
 */
export async function getOwnerPolicy(deps: Pick<OwnerPolicyDeps, 'policies'>, target: PolicyTarget): Promise<OwnerPolicyView> {
  return view(target, await deps.policies.read(target))
}

/**
 * Replaces the account's or an agent's policy (a validated body, ownerPolicySchema). What
 * tightens applies at once, what loosens waits for the hold, as a guardrail change does
 * (policyChange.ts); every part is journaled in the audit trail with `actor`.
 *
 * @example
 * await putOwnerPolicy(deps, { target: { scope: 'agent', accountId, agentId }, actor, policy: { rules } })
 */
export async function putOwnerPolicy(
  deps: OwnerPolicyDeps,
  input: { target: PolicyTarget; actor: AuditActor; policy: OwnerPolicy },
): Promise<OwnerPolicyView> {
  return view(input.target, await deps.policies.apply({ ...input, holdSeconds: deps.holdSeconds }))
}
