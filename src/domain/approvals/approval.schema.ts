import { z } from 'zod'

/** `GET /approvals?status=&agentId=&limit=&cursor=`: newest first; `cursor` is a page's `nextCursor`. */
export const listApprovalsQuery = z.strictObject({
  status: z.enum(['pending', 'approved', 'rejected']).optional(),
  agentId: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(400, 'Invalid cursor.').optional(),
})
export type ListApprovalsQuery = z.infer<typeof listApprovalsQuery>

/** `POST /approvals/:id/approve` and `/reject`: an optional reason, kept with the decision. */
export const decideApprovalBody = z.strictObject({ reason: z.string().trim().min(1).max(500).optional() })
export type DecideApprovalBody = z.infer<typeof decideApprovalBody>
