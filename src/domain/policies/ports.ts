import type { AuditActor } from '../agents/auditTrail.ts'
import type { OwnerPolicy, PolicyInitiator } from './ownerPolicy.schema.ts'
import type { PolicyDecision, PolicyOperation, ScopedPolicy } from './ownerPolicyRules.ts'
import type { Queryable } from '../billing/ports.ts'

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

/** What a money move shows the policies, as its use case knows it (who started it and when are the gate's). */
export type PolicyFacts = Omit<PolicyOperation, 'initiator' | 'atMs' | 'netUsd'>

/** The decision recorded on the operation and shown in its answer (`policy: { decision, rule }`), with the facts it was made on. */
export type PolicyStamp = Pick<PolicyDecision, 'decision' | 'rule'> & { facts: PolicyFacts }

export type PolicyGateInput = {
  accountId: string
  agentId: string
  opId: string
  parentId?: string | null | undefined
  /** Who starts it, when the caller says (a dry run); otherwise read from `parentId`. */
  initiator?: PolicyInitiator | undefined
  facts: PolicyFacts
}

/**
 * Evaluates an operation against the account's and the agent's policies (src/actors/walletOp/policyGate.ts):
 * who started it (from `parentId`), the net USD of every window a rule names (the operation
 * `opId` itself left out), the time; `db`, the transaction that holds the agent's lock.
 */
export interface PolicyGate {
  /** `all`: every matching rule with its reason (a dry run), not only the deciding one. */
  decide(input: PolicyGateInput, db?: Queryable, opts?: { all?: boolean }): Promise<PolicyDecision>
}
