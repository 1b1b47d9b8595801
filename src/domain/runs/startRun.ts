import { AgentDeletedError, InsufficientCreditsError, ModelProviderNotConfiguredError, ValidationError } from '../errors.ts'
import { fieldErrorsOf } from '../fieldErrors.ts'
import type { AgentsRepository } from '../agents/ports.ts'
import type { CreditsRepository } from '../billing/ports.ts'
import { worstCaseCredits } from '../billing/modelCallCredits.ts'
import type { ChatModel } from '../chat/ports.ts'
import { estimateTokens } from '../chat/chatPrompt.ts'
import { startRunSchema, type RunLimits } from './run.schema.ts'
import type { RunInput, Runs, RunState } from './ports.ts'
import { runView } from './getRun.ts'

export type RunsDeps = {
  agents: AgentsRepository
  models: ReadonlyMap<string, ChatModel>
  defaultModel: ChatModel
  provider: { readonly configured: boolean }
  credits: Pick<CreditsRepository, 'balance'>
  runs: Runs
  /** The tool names a model may call among those the agent's skills grant (built-in and custom). */
  grantedTools(accountId: string, skills: readonly string[]): Promise<string[]>
  limits: RunLimits & { maxTokens: number; stopWaitMs: number }
  newId(): string
}

export type StartRunInput = { accountId: string; agentId: string; body: unknown; runId?: string | undefined; trigger?: RunInput['trigger'] }

/**
 * Starts an autonomous run of an agent: checks the request (budgets up to their ceilings), the
 * agent (404, 409 deleted), the model (422), the provider (503) and that the account covers the
 * first model call's worst case (402); then creates the run's actor (409 `run_in_progress` when
 * the agent has a run that has not ended, enforced by the database). Answers the run as created.
 *
 * @example
 * const run = await startRun(deps, { accountId, agentId, body: { goal: 'Rebalance to 50% USDC', maxSteps: 5 } })
 */
export async function startRun(deps: RunsDeps, input: StartRunInput): Promise<ReturnType<typeof runView>> {
  const parsed = startRunSchema(deps.limits).safeParse(input.body ?? {})
  if (!parsed.success) throw new ValidationError(fieldErrorsOf(parsed.error))
  const body = parsed.data
  const agent = await deps.agents.getOwned(input.accountId, input.agentId)
  if (agent.status === 'deleted') throw new AgentDeletedError()
  const model = body.model !== undefined ? deps.models.get(body.model) : (deps.models.get(agent.model) ?? deps.defaultModel)
  if (!model) throw new ValidationError({ model: `Unknown model "${body.model}": see GET /models.` })
  const tools = await deps.grantedTools(input.accountId, agent.skills)
  if (tools.length > 0 && !model.supportsTools) {
    throw new ValidationError({ model: `Model "${model.id}" does not support tools, which this agent's skills grant; pick one with supportsTools.` })
  }
  if (!deps.provider.configured) throw new ModelProviderNotConfiguredError()
  const { credits, reserved } = await deps.credits.balance(input.accountId)
  const firstCall = worstCaseCredits({ promptTokens: estimateTokens([{ role: 'user', content: body.goal }]), maxTokens: deps.limits.maxTokens }, model)
  if (credits - reserved < firstCall) throw new InsufficientCreditsError({ available: credits - reserved, required: firstCall })
  const run: RunInput = {
    runId: input.runId ?? deps.newId(),
    accountId: input.accountId,
    agentId: agent.id,
    model: model.id,
    temperature: agent.temperature ?? null,
    goal: body.goal,
    tools,
    trigger: input.trigger ?? 'api',
    maxSteps: body.maxSteps ?? deps.limits.defaults.maxSteps,
    maxCredits: body.maxCredits ?? deps.limits.defaults.maxCredits,
    maxSeconds: body.maxSeconds ?? deps.limits.defaults.maxSeconds,
  }
  await deps.runs.start(run)
  const state: RunState | undefined = await deps.runs.get(run.runId)
  return runView(state!)
}
