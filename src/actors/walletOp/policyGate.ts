import type pg from 'pg'
import { effectiveOwnerPolicies, initiatorOf } from '../../adapters/db/ownerPolicy.store.ts'
import { spentInWindowsUsd } from '../../adapters/db/walletOp.store.ts'
import { evaluateOwnerPolicies, netWindowsOf } from '../../domain/policies/ownerPolicyRules.ts'
import type { PolicyGate } from '../../domain/policies/ports.ts'

/**
 * The owners' policies over the pool (or the caller's transaction, under the agent's lock):
 * the account's and the agent's policies in effect (one statement; none: the guardrails decide
 * and nothing more is read), who started the move (its parent actor: a chat turn, a run, an
 * automation or a mirror; none, a key), the net USD of the windows the rules name (as the daily
 * cap counts it), the clock. A swap a mirror makes is a `mirror_copy`.
 *
 * @example
 * const gate = createPolicyGate(pool)
 * const d = await gate.decide({ accountId, agentId, opId, parentId, facts: { kind: 'swap', tokensIn, tokensOut, usdValue: '20' } })
 */
export function createPolicyGate(pool: pg.Pool, clock: () => number = Date.now): PolicyGate {
  return {
    async decide(input, db = pool, { all = false } = {}) {
      const policies = await effectiveOwnerPolicies(db, input)
      if (policies.length === 0) return { decision: 'guardrails', rule: null, matched: [] }
      const initiator = input.initiator ?? (await initiatorOf(db, input.parentId))
      const windows = netWindowsOf(policies)
      const netUsd = await spentInWindowsUsd(db, { agentId: input.agentId, accountId: input.accountId, exceptId: input.opId, windows })
      const kind = initiator === 'mirror' && input.facts.kind === 'swap' ? 'mirror_copy' : input.facts.kind
      return evaluateOwnerPolicies(policies, { ...input.facts, kind, initiator, atMs: clock(), netUsd }, { all })
    },
  }
}
