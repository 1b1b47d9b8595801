import { z } from 'zod'
import { NotFoundError } from '../domain/errors.ts'
import { DEFAULT_RUN_LIMITS, RUN_STATUSES, startRunSchema } from '../domain/runs/run.schema.ts'
import { stableUuid } from '../domain/util/stableUuid.ts'
import { defineTool, type ToolCall } from './tool.ts'

const runArg = z.strictObject({ run_id: z.uuid('Must be a run id.') })

/** The bound agent's run (a run of another agent or account is not found). */
async function ownRun({ core, accountId, agentId }: ToolCall, runId: string) {
  const run = await core.getRun({ accountId, runId })
  if (run.agentId !== agentId) throw new NotFoundError('Run')
  return run
}

/**
 * Autonomous runs, steered from outside (an MCP client). No skill grants these: a run's or a
 * chat turn's model must not start, read or cancel runs of its own agent.
 */
export const createAgentRunTool = defineTool({
  name: 'create_agent_run',
  description:
    'Start an autonomous run of the agent: it works toward `goal` on its own (model call, tool calls, next step) ' +
    'within its policy and the budgets maxSteps, maxCredits and maxSeconds (defaults and ceilings apply; credits are ' +
    'charged per model call). One run at a time per agent. Answers the run; read its progress with get_agent_run_steps.',
  // The ceilings shown are the documented defaults; the use case checks the configured ones.
  args: startRunSchema(DEFAULT_RUN_LIMITS),
  scope: 'trade',
  movesFunds: false,
  run: async (call, args) => {
    // The run id comes from the call id: a retried call answers the run it started.
    const runId = stableUuid(call.accountId, 'tool/create_agent_run', call.callId)
    const existing = await ownRun(call, runId).catch((err: unknown) => (err instanceof NotFoundError ? undefined : Promise.reject(err)))
    return existing ?? call.core.startRun({ accountId: call.accountId, agentId: call.agentId, request: args, runId })
  },
})

export const listAgentRunsTool = defineTool({
  name: 'list_agent_runs',
  description: "List the agent's runs, newest first, with status, goal and budgets used. `status` filters; `limit` (1-100) and `cursor` page.",
  args: z.strictObject({
    status: z.enum(RUN_STATUSES).optional(),
    limit: z.number('An integer from 1 to 100.').int('An integer from 1 to 100.').min(1, 'An integer from 1 to 100.').max(100, 'An integer from 1 to 100.').optional(),
    cursor: z.string().max(200).optional(),
  }),
  scope: 'read',
  movesFunds: false,
  run: ({ core, accountId, agentId }, { status, limit, cursor }) =>
    core.listRuns({ accountId, agentId, query: { status, limit: limit ?? 20, cursor } }),
})

export const getAgentRunStepsTool = defineTool({
  name: 'get_agent_run_steps',
  description: 'Read one run of the agent: its status, budgets and their use, and each step (the model call, the tool calls with arguments, results, tx hashes and credits), then the final summary.',
  args: runArg,
  scope: 'read',
  movesFunds: false,
  run: (call, { run_id }) => ownRun(call, run_id),
})

export const cancelAgentRunTool = defineTool({
  name: 'cancel_agent_run',
  description: 'Stop a run of the agent: no new step or tool call starts; one already sent completes and is recorded. Answers the run and what was still in flight.',
  args: runArg,
  scope: 'trade',
  movesFunds: false,
  run: async (call, { run_id }) => {
    await ownRun(call, run_id)
    return call.core.stopRun({ accountId: call.accountId, runId: run_id })
  },
})

export const RUN_TOOLS = [createAgentRunTool, listAgentRunsTool, getAgentRunStepsTool, cancelAgentRunTool]

/** Tools no skill may grant: the runs of the model's own agent. */
export const RUN_TOOL_NAMES: ReadonlySet<string> = new Set(RUN_TOOLS.map((t) => t.name))
