import { createOwnerPolicyStore } from '../adapters/db/ownerPolicy.store.ts'
import type { AuditActor } from '../domain/agents/auditTrail.ts'
import { getOwnerPolicy, putOwnerPolicy } from '../domain/policies/ownerPolicies.ts'
import type { OwnerPolicy } from '../domain/policies/ownerPolicy.schema.ts'
import type { PolicyTarget } from '../domain/policies/ports.ts'
import type { CoreAdapters } from './coreAdapters.ts'

/**
 * Owners' policies (docs/api.md, "Policies"): the account's and each agent's, read and replaced;
 * a loosening waits for WHITELIST_HOLD_SECONDS as a guardrail loosening does.
 *
 * @example
 * const { putOwnerPolicy } = policyUseCases(adapters)
 */
export function policyUseCases({ pool, identity }: Pick<CoreAdapters, 'pool' | 'identity'>) {
  const deps = { policies: createOwnerPolicyStore(pool), holdSeconds: identity.config.whitelistHoldSeconds }
  return {
    getOwnerPolicy: (target: PolicyTarget) => getOwnerPolicy(deps, target),
    putOwnerPolicy: (input: { target: PolicyTarget; actor: AuditActor; policy: OwnerPolicy }) => putOwnerPolicy(deps, input),
  }
}
