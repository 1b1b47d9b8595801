import { z } from 'zod'
import { creditKindSchema } from '../domain/billing/creditKinds.ts'
import { decodeCursor, encodeCursor } from '../domain/util/pageCursor.ts'
import { defineTool } from './tool.ts'

const page = {
  limit: z.number('An integer from 1 to 100.').int('An integer from 1 to 100.').min(1, 'An integer from 1 to 100.').max(100, 'An integer from 1 to 100.').default(20),
  cursor: z.string('The nextCursor of the previous page.').max(200).optional(),
}

const nextCursor = (last: { createdAt: string; id: string } | undefined) => (last ? encodeCursor(last.createdAt, last.id) : null)

export const listAgentsTool = defineTool({
  name: 'list_agents',
  description:
    'List the agents of the account, newest first: each with its id, name, status, model, skills, wallet address and ' +
    'policy. Pass nextCursor back as cursor for the next page. Use an agent id as agent_id in the other tools.',
  args: z.strictObject(page),
  scope: 'read',
  movesFunds: false,
  agent: 'none',
  run: async ({ core, accountId }, { limit, cursor }) => {
    const { agents, last } = await core.listAgents({ accountId, limit, after: decodeCursor(cursor) })
    return { agents, nextCursor: nextCursor(last) }
  },
})

export const getBalanceTool = defineTool({
  name: 'get_balance',
  description:
    'Read the account credits that pay for model calls (1 credit = 0.001 USD): the balance, the credits held by calls ' +
    'in flight, and what was spent today and this month (UTC).',
  args: z.strictObject({}),
  scope: 'read',
  movesFunds: false,
  agent: 'none',
  run: ({ core, accountId }) => core.getBilling({ accountId }),
})

export const getTransactionsTool = defineTool({
  name: 'get_transactions',
  description:
    'List the credit ledger of the account, newest first: grants, deposits, model usage and market entries, each with ' +
    'its signed credits and the balance after it. Filter with kind; pass nextCursor back as cursor for the next page.',
  args: z.strictObject({ ...page, kind: creditKindSchema.optional() }),
  scope: 'read',
  movesFunds: false,
  agent: 'none',
  run: async ({ core, accountId }, { limit, cursor, kind }) => {
    const { transactions, last } = await core.listCreditTransactions({ accountId, limit, kind, after: decodeCursor(cursor) })
    return { transactions, nextCursor: nextCursor(last) }
  },
})

export const getModelCatalogTool = defineTool({
  name: 'get_model_catalog',
  description:
    'List the models an agent can use: id, name, credit prices per million input and output tokens, context window, ' +
    'whether it calls tools, and which one is the default.',
  args: z.strictObject({}),
  scope: 'read',
  movesFunds: false,
  agent: 'none',
  run: async ({ core }) => ({ models: core.listModels() }),
})
