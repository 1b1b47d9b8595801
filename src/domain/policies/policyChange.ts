import type { OwnerPolicy, PolicyRule } from './ownerPolicy.schema.ts'
import { MAX_POLICY_RULES } from './ownerPolicy.schema.ts'

/** How a new owner's policy lands: `now` applies at once, `held` after the hold (null: nothing). */
export type OwnerPolicyChangePlan = { now: OwnerPolicy | null; held: OwnerPolicy | null }

const protective = (r: PolicyRule) => r.action !== 'accept'
/** A rule's criteria, order aside (its name only names it). */
const criteriaKey = (r: PolicyRule) => JSON.stringify(r.criteria.map((c) => JSON.stringify(c)).sort())
const sameRules = (a: OwnerPolicy, b: OwnerPolicy) => JSON.stringify(a.rules) === JSON.stringify(b.rules)

/**
 * Whether `next` protects at least as much as `current`: every reject of `current` is still a
 * reject over the same criteria, every require_approval still a require_approval or a reject,
 * and `next` has no accept rule `current` lacks (an accept skips the guardrails). Adding rejects
 * or approvals, removing accepts, reordering and renaming tighten; anything else loosens.
 */
export function tightens(current: OwnerPolicy, next: OwnerPolicy): boolean {
  const nextBy = new Map<string, Set<string>>()
  for (const r of next.rules) nextBy.set(criteriaKey(r), (nextBy.get(criteriaKey(r)) ?? new Set()).add(r.action))
  for (const r of current.rules.filter(protective)) {
    const actions = nextBy.get(criteriaKey(r))
    if (!actions?.has('reject') && !(r.action === 'require_approval' && actions?.has('require_approval'))) return false
  }
  const currentAccepts = new Set(current.rules.filter((r) => r.action === 'accept').map(criteriaKey))
  return next.rules.every((r) => r.action !== 'accept' || currentAccepts.has(criteriaKey(r)))
}

/**
 * Splits a new owner's policy into what applies at once and what waits for the hold, as a
 * guardrail change does: a tightening applies whole at once; a loosening waits whole, while its
 * new reject and require_approval rules apply at once beside the current rules (those whose name
 * a current rule already has, or that would pass the rule limit, wait with the rest). Pure.
 *
 * @example
 * planOwnerPolicyChange({ rules: [] }, { rules: [{ name: 'no nights', action: 'reject', criteria: [...] }] })
 * // { now: { rules: [no nights] }, held: null }
 */
export function planOwnerPolicyChange(current: OwnerPolicy, next: OwnerPolicy): OwnerPolicyChangePlan {
  if (sameRules(current, next)) return { now: null, held: null }
  if (tightens(current, next)) return { now: next, held: null }
  const names = new Set(current.rules.map((r) => r.name))
  const have = new Set(current.rules.filter(protective).map((r) => `${r.action}:${criteriaKey(r)}`))
  const added = next.rules.filter((r) => protective(r) && !names.has(r.name) && !have.has(`${r.action}:${criteriaKey(r)}`))
  const fits = added.length > 0 && current.rules.length + added.length <= MAX_POLICY_RULES
  return { now: fits ? { rules: [...current.rules, ...added] } : null, held: next }
}
