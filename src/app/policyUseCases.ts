import { createOwnerPolicyStore } from '../adapters/db/ownerPolicy.store.ts'
import type { AuditActor } from '../domain/agents/auditTrail.ts'
import { getOwnerPolicy, putOwnerPolicy } from '../domain/policies/ownerPolicies.ts'
import type { OwnerPolicy } from '../domain/policies/ownerPolicy.schema.ts'
import type { PolicyTarget } from '../domain/policies/ports.ts'
import type { CoreAdapters } from './coreAdapters.ts'
import { simulatePolicy, type SimulatePolicyBody, type SimulatePolicyDeps } from '../domain/policies/simulatePolicy.ts'
import { createPolicyGate } from '../actors/walletOp/policyGate.ts'
import { transferPricing } from '../adapters/chain/walletAdapters.ts'

/**
 * Owners' policies (docs/api.md, "Policies"): the account's and each agent's, read and replaced;
 * a loosening waits for WHITELIST_HOLD_SECONDS as a guardrail loosening does.
 *
 * @example
 * const { putOwnerPolicy } = policyUseCases(adapters)
 */
export function policyUseCases(
  { pool, identity, wallet, agents }: Pick<CoreAdapters, 'pool' | 'identity' | 'wallet' | 'agents'>,
  ports: { swaps: SimulatePolicyDeps['swaps']; launches: SimulatePolicyDeps['launches'] },
) {
  const deps = { policies: createOwnerPolicyStore(pool), holdSeconds: identity.config.whitelistHoldSeconds }
  const simulate: SimulatePolicyDeps = { policies: createPolicyGate(pool), agents, ...ports, wallet: wallet && transferPricing({ pool, wallet }) }
  return {
    /** A dry run: the decision and every matching rule, nothing reserved or sent. */
    simulatePolicy: (input: { accountId: string; body: SimulatePolicyBody }) => simulatePolicy(simulate, input),
    getOwnerPolicy: (target: PolicyTarget) => getOwnerPolicy(deps, target),
    putOwnerPolicy: (input: { target: PolicyTarget; actor: AuditActor; policy: OwnerPolicy }) => putOwnerPolicy(deps, input),
  }
}
