/** What a wallet operation waiting for an owner's decision carries (its actor's `approval`). */
export type ApprovalRequest = {
  /** The approval's id: its operation's id (one approval per operation). */
  id: string
  /** The USD value of the move, and the policy threshold it is above. */
  usdValue: string
  thresholdUsd: string
  /** The owner's policy rule that asked for it (docs/api.md, "Policies"); absent when the guardrails' threshold did. */
  rule?: { name: string; scope: 'account' | 'agent' } | undefined
  requestedAt: string
  expiresAt: string
}

/** An approval as the operation's machine keeps it: the request, then the decision. */
export type ApprovalRecord = ApprovalRequest & {
  status: 'pending' | 'approved' | 'rejected'
  /** Why it was rejected (the owner's reason, or `expired`), or the approver's note. */
  reason: string | null
  /** Who decided: `key:<id>` or `session:<address>`; null when it expired. */
  decidedBy: string | null
  decidedAt: string | null
}
