import { DEFAULT_POLICY, usdCents, type Policy } from '../agents/policy.ts'
import type { ApprovalRequest } from './approval.types.ts'

/**
 * The approval a money move of `usdValue` needs under the agent's policy, or null when its
 * `require_approval_above_usd` is unset or not exceeded. The approval's id is the operation's;
 * it expires `approval_ttl_seconds` after `now`. Pure.
 *
 * @example
 * approvalFor({ require_approval_above_usd: '1000' }, { opId, usdValue: '2000.00', now: Date.now() })
 * // { id: opId, usdValue: '2000.00', thresholdUsd: '1000', requestedAt, expiresAt: requestedAt + 900 s }
 */
export function approvalFor(
  stored: Partial<Policy> | null | undefined,
  { opId, usdValue, now }: { opId: string; usdValue: string; now: number },
): ApprovalRequest | null {
  const policy: Policy = { ...DEFAULT_POLICY, ...stored }
  const threshold = policy.require_approval_above_usd
  if (threshold === null || usdCents(usdValue) <= usdCents(threshold)) return null
  return {
    id: opId,
    usdValue,
    thresholdUsd: threshold,
    requestedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + policy.approval_ttl_seconds * 1000).toISOString(),
  }
}
