import { z } from 'zod'

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/)
/** A 0x address as a request names it (any case), lower-cased. */
const evmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'Must be a 0x-prefixed 20-byte hex address.')
  .transform((a) => a.toLowerCase())

/** `GET /fees/earnings?agentId=`; the get_fee_earnings tool binds the agent instead. */
export const earningsQuery = z.strictObject({ agentId: z.uuid('Must be an agent id.') })
/** `POST /fees/claim`: every token with unclaimed fees, or the one named. */
export const claimBody = z.strictObject({
  agentId: z.uuid('Must be an agent id.'),
  tokenAddress: evmAddress.optional(),
})

export type GetFeeEarningsInput = { accountId: string; agentId: string }
export type PlanClaimInput = { accountId: string; agentId: string; tokenAddress?: string | undefined }
/** The request, and the operation id (an Idempotency-Key's resource id, or one derived from a tool call id). */
/** `parentId`: the actor the claim is made for (a chat turn, a run), which hears its end as its child. */
export type ClaimFeesInput = PlanClaimInput & { operationId: string; parentId?: string | undefined }

/** Parameters of a `claim` wallet operation: one creator fee claim per token, in this order. */
export const claimParamsSchema = z.object({
  claims: z
    .array(
      z.object({
        tokenAddress: address,
        symbol: z.string(),
        venue: z.enum(['venue-a', 'venue-b']),
        quote: z.string(),
        quoteDecimals: z.number().int().min(0).max(36),
        /** Receiver: the agent's payout wallet. */
        to: address,
        /** Unclaimed when planned (quote asset, and the launched token on venue-b), decimal strings. */
        expectedAmount: z.string(),
        expectedTokenAmount: z.string(),
      }),
    )
    .min(1),
})
export type ClaimParams = z.infer<typeof claimParamsSchema>
