import { ValidationError } from '../errors.ts'
import type { AgentRecord } from '../agents/ports.ts'
import { fieldErrorsOf } from '../fieldErrors.ts'
import { checkModelLoop, type ModelLoopDeps } from '../chat/checkModelLoop.ts'
import { runSystemPromptOf } from './runPrompt.ts'
import { startRunSchema, type RunLimits, type StartRunRequest } from './run.schema.ts'
import type { RunInput, Runs } from './ports.ts'
import { runView } from './getRun.ts'

export type RunsDeps = ModelLoopDeps & {
  runs: Runs
  limits: RunLimits & { maxTokens: number; stopWaitMs: number }
  newId(): string
}

export type StartRunInput = {
  accountId: string
  agentId: string
  request: StartRunRequest
  runId?: string | undefined
  trigger?: RunInput['trigger']
  /** The automation whose firing starts the run (its budget counts the run's money moves). */
  automationId?: string | undefined
  /** The account's balance as the caller read it already (a schedule check reads it with the last run's time). */
  balance?: { credits: number; reserved: number } | undefined
  /** The agent as the caller read it already (a schedule check reads it with the balance). */
  agent?: AgentRecord | undefined
}

/**
 * Starts an autonomous run of an agent: checks the request (budgets up to their ceilings), the
 * agent (404, 409 deleted), the model (422), the provider (503) and that the account covers the
 * first model call's worst case (402); then creates the run's actor (409 `run_in_progress` when
 * the agent has a run that has not ended, enforced by the database). Answers the run as created.
 *
 * @example
 * const run = await startRun(deps, { accountId, agentId, request: { goal: 'Rebalance to 50% USDC', maxSteps: 5 } })
 */
export async function startRun(deps: RunsDeps, input: StartRunInput): Promise<ReturnType<typeof runView>> {
  // The budgets against the configured ceilings (the front door parsed the shape).
  const parsed = startRunSchema(deps.limits).safeParse(input.request)
  if (!parsed.success) throw new ValidationError(fieldErrorsOf(parsed.error))
  const body = parsed.data
  // Without a balance read already, the run's own insert checks that the account covers the first call.
  const creditCheck = input.balance ? 'read' : 'insert'
  const { agent, model, tools, instructions, firstCallCredits } = await checkModelLoop(deps, {
    accountId: input.accountId, agentId: input.agentId, model: body.model, firstMessage: body.goal, refuseListed: 'start a run', balance: input.balance, agent: input.agent, creditCheck,
  })
  const run: RunInput = {
    runId: input.runId ?? deps.newId(),
    accountId: input.accountId,
    agentId: agent.id,
    model: model.id,
    temperature: agent.temperature ?? null,
    goal: body.goal,
    tools,
    system: runSystemPromptOf(agent, instructions),
    trigger: input.trigger ?? 'api',
    // The agent needs a run's end only when a schedule check met the run in progress (it asks then).
    tellParent: false,
    ...(input.automationId ? { automationId: input.automationId } : {}),
    maxSteps: body.maxSteps ?? deps.limits.defaults.maxSteps,
    maxCredits: body.maxCredits ?? deps.limits.defaults.maxCredits,
    maxSeconds: body.maxSeconds ?? deps.limits.defaults.maxSeconds,
  }
  return runView(await deps.runs.start(run, creditCheck === 'insert' ? { coverCredits: firstCallCredits } : {}))
}
