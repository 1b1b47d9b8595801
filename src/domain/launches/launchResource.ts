import { launchProgress } from './launchRules.ts'
import type { LaunchRecord } from './ports.ts'

/**
 * A launch as the API answers it: what was asked, the status with its progress, and what the
 * chain made (token, pool, transaction) or the error that ended it.
 *
 * @example
 * const record = await deps.actors.find(launchId)
 * if (record) return launchResource(record)
 */
export function launchResource(r: LaunchRecord) {
  const c = r.context
  return {
    id: r.id,
    agentId: c.agentId,
    venue: c.venue,
    symbol: c.symbol,
    name: c.name,
    description: c.description,
    logoUrl: c.logoUrl,
    quote: c.quote,
    status: r.status,
    progress: launchProgress(r.status, c),
    tokenAddress: c.tokenAddress,
    poolAddress: c.poolAddress,
    txHash: c.txHash,
    error: c.error,
    // A seed above the policy's approval threshold: the approval it waits (or waited) for.
    ...(c.approval ? { approvalId: c.approval.id, approval: c.approval } : {}),
    // The owners' policies' decision and the rule that made it (docs/api.md, "Policies").
    ...(c.policy ? { policy: { decision: c.policy.decision, rule: c.policy.rule } } : {}),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  }
}
export type Launch = ReturnType<typeof launchResource>

/** A launch has ended: live or failed. */
export const launchEnded = (status: string) => status === 'live' || status === 'failed'

/** What a request waits for: the launch's end, or its wait for an owner's approval (answered at once). */
export const launchSettled = (status: string) => launchEnded(status) || status === 'awaiting_approval'
