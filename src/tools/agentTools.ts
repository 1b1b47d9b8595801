import { z } from 'zod'
import { agentSchemas } from '../domain/agents/agent.schema.ts'
import { parseAgentBody } from '../domain/agents/parseAgentBody.ts'
import { ForbiddenError } from '../domain/errors.ts'
import { defineTool } from './tool.ts'

/**
 * The agent bodies' shapes for the tool list (JSON Schema) and a first parse; the catalogs (models,
 * skills, strategies, the least run interval) are checked by the run with `core.agentSchemas`,
 * exactly as the route checks them.
 */
const anyName = { has: () => true } as unknown as ReadonlySet<string>
const shapes = agentSchemas({ models: anyName, defaultModel: '', skills: anyName, strategies: anyName, minRunIntervalSeconds: 0 })

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

export const createAgentTool = defineTool({
  name: 'create_agent',
  description:
    'Create a trading agent with its own custodial wallet. Only `name` is needed; `strategy` (a preset, see the skills ' +
    'catalog) fills in skills and run interval, `model` defaults to the catalog default (see get_model_catalog), and ' +
    '`policy` sets its guardrails (caps, price-impact limit, token lists). Answers the new agent with its wallet address.',
  args: shapes.create.in,
  scope: 'trade',
  movesFunds: false,
  agent: 'none',
  run: async ({ core, accountId }, args) => {
    const body = await parseAgentBody(core, accountId, core.agentSchemas.create, args)
    return core.createAgent({ ...body, accountId })
  },
})

export const updateAgentTool = defineTool({
  name: 'update_agent',
  description:
    "Change the agent's configuration: any of name, model, skills, system_prompt, persona, strategy, temperature, " +
    'is_public, public_description, run_interval_seconds. Changing `policy` or `payout_wallet` needs an admin key ' +
    '(refused with forbidden otherwise); a loosened policy takes effect only after the hold (see pendingChanges). The ' +
    'change is recorded in the agent audit trail.',
  args: shapes.update,
  scope: 'trade',
  movesFunds: false,
  run: async (call, args) => {
    // As on the API: guardrails are changed by an admin key only, never by a trade key or a model.
    if (('policy' in args || 'payout_wallet' in args) && !call.scopes?.includes('admin')) {
      throw new ForbiddenError('Changing the policy or the payout wallet needs the "admin" scope.')
    }
    const body = await parseAgentBody(call.core, call.accountId, call.core.agentSchemas.update, args)
    const actor = { type: 'key' as const, keyId: call.keyId ?? null, tool: 'update_agent' }
    return call.core.updateAgent({ ...body, accountId: call.accountId, agentId: call.agentId, actor })
  },
})
