import { z } from 'zod'
import { claimBody } from '../domain/fees/fees.schema.ts'
import { stableUuid } from '../domain/util/stableUuid.ts'
import { defineTool, startedChild } from './tool.ts'

export const getFeeEarningsTool = defineTool({
  name: 'get_fee_earnings',
  description:
    'Read the creator fees earned by the tokens this agent launched: per token the amount earned, still claimable and ' +
    'already claimed (in its quote asset, and for venue-b also in the token itself), each with a USD value, plus totals ' +
    'and the payout address that claims are sent to. Self-funded tokens earn no creator fees.',
  args: z.strictObject({}),
  scope: 'read',
  movesFunds: false,
  run: ({ core, accountId, agentId }) => core.getFeeEarnings({ accountId, agentId }),
})

const claimArgs = claimBody.omit({ agentId: true }).extend({
  tokenAddress: claimBody.shape.tokenAddress.describe('Claim only this token (0x address); leave out to claim every token with unclaimed fees.'),
})

export const claimFeesTool = defineTool({
  name: 'claim_fees',
  description:
    "Claim this agent's unclaimed creator fees on chain, sent to the agent's payout wallet (its own wallet when none is " +
    'set): one transaction per token with fees left. Answers the claim with its status, tx hashes and the amounts paid. ' +
    'Fails with nothing_to_claim when no fees are left; check get_fee_earnings first.',
  args: claimArgs,
  scope: 'trade',
  movesFunds: true,
  // The operation id comes from the call id: a retried tool call finds its claim and sends nothing new.
  run: async (call, args) =>
    startedChild(
      call,
      await call.core.claimFees({ ...args, accountId: call.accountId, agentId: call.agentId, operationId: stableUuid(call.accountId, 'tool/claim_fees', call.callId), parentId: call.parent?.actorId }),
    ),
  preview: ({ core, accountId, agentId }, args) => core.previewClaimFees({ ...args, accountId, agentId }),
})
