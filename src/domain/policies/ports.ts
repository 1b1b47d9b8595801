import type { AuditActor } from '../agents/auditTrail.ts'
import type { OwnerPolicy } from './ownerPolicy.schema.ts'
import type { ScopedPolicy } from './ownerPolicyRules.ts'

/** Whose policy: the account's, or one agent's (which must be the account's). */
export type PolicyTarget = { scope: 'account'; accountId: string } | { scope: 'agent'; accountId: string; agentId: string }

/** A stored owner's policy: the rules in effect, and a loosening waiting for its hold. */
export type StoredOwnerPolicy = {
  policy: OwnerPolicy
  pending: { policy: OwnerPolicy; effectiveAt: string } | null
  updatedAt: string | null
}

/** The owners' policies (src/adapters/db/ownerPolicy.store.ts). */
export interface OwnerPolicyStore {
  /** The policy as it applies now (a matured pending change laid over); 404 for an agent not the account's. */
  read(target: PolicyTarget): Promise<StoredOwnerPolicy>
  /**
   * Stores a new policy in one transaction under the row's lock: a matured pending change folded
   * in, what tightens applied at once, what loosens held for `holdSeconds` (replacing an earlier
   * pending change: the latest request wins), every part journaled with `actor`.
   */
  apply(input: { target: PolicyTarget; actor: AuditActor; policy: OwnerPolicy; holdSeconds: number }): Promise<StoredOwnerPolicy>
  /** The account's and the agent's policies in effect, the account's first (empty ones left out). */
  effective(input: { accountId: string; agentId: string }): Promise<ScopedPolicy[]>
}
