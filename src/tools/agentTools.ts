import { z } from 'zod'
import { defineTool } from './tool.ts'

export const getAgentTool = defineTool({
  name: 'get_agent',
  description:
    'Read the agent: its name, status, model, skills, wallet address, payout wallet, and its policy (per-trade and ' +
    'daily USD caps, price-impact limit, token allow and deny lists, kill switch) with any changes still on hold.',
  args: z.strictObject({}),
  scope: 'read',
  movesFunds: false,
  run: ({ core, accountId, agentId }) => core.getAgent({ accountId, agentId }),
})
