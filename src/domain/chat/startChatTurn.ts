import { AgentDeletedError, InsufficientCreditsError, ModelProviderNotConfiguredError, ValidationError } from '../errors.ts'
import { fieldErrorsOf } from '../fieldErrors.ts'
import type { AgentsRepository } from '../agents/ports.ts'
import type { CreditsRepository } from '../billing/ports.ts'
import { creditsToUsd, worstCaseCredits } from '../billing/modelCallCredits.ts'
import { chatRequestSchema } from './chat.schema.ts'
import { estimateTokens } from './chatPrompt.ts'
import type { ChatModel, ChatTurns, ChatTurnState } from './ports.ts'

export type ChatDeps = {
  agents: AgentsRepository
  models: ReadonlyMap<string, ChatModel>
  defaultModel: ChatModel
  provider: { readonly configured: boolean }
  credits: Pick<CreditsRepository, 'balance'>
  turns: ChatTurns
  /** The tool names the agent's skills grant (built-in and custom: `resolveAgentSkills`). */
  grantedTools(input: { accountId: string; skills: readonly string[] }): Promise<readonly string[]>
  /** The tool names a model may call among those granted (the registry's `read` and `trade` tools). */
  modelTools(granted: ReadonlySet<string>): string[]
  limits: { maxRounds: number; maxTokens: number }
  newId(): string
}

/** `turnId`: chosen by the caller when it must listen to the turn before it starts (streaming). */
export type StartChatTurnInput = { accountId: string; agentId: string; body: unknown; turnId?: string | undefined }

/**
 * Starts a chat turn of an agent (running or stopped): checks the request, the agent (404 for
 * another account's, 409 when deleted), the model (422 unknown, or without tool support while
 * the agent has tools), the provider (503) and that the account can cover the first model
 * call's worst case (402); then creates the turn's actor with the user message.
 *
 * @example
 * const { turnId, stream } = await startChatTurn(deps, { accountId, agentId, body: { message: 'Buy 0.1 ETH of USDC' } })
 */
export async function startChatTurn(deps: ChatDeps, input: StartChatTurnInput): Promise<{ turnId: string; stream: boolean }> {
  const parsed = chatRequestSchema.safeParse(input.body ?? {})
  if (!parsed.success) throw new ValidationError(fieldErrorsOf(parsed.error))
  const body = parsed.data
  const agent = await deps.agents.getOwned(input.accountId, input.agentId)
  if (agent.status === 'deleted') throw new AgentDeletedError()
  const model = body.model !== undefined ? deps.models.get(body.model) : (deps.models.get(agent.model) ?? deps.defaultModel)
  if (!model) throw new ValidationError({ model: `Unknown model "${body.model}": see GET /models.` })
  const tools = deps.modelTools(new Set(await deps.grantedTools({ accountId: input.accountId, skills: agent.skills })))
  if (tools.length > 0 && !model.supportsTools) {
    throw new ValidationError({ model: `Model "${model.id}" does not support tools, which this agent's skills grant; pick one with supportsTools.` })
  }
  if (!deps.provider.configured) throw new ModelProviderNotConfiguredError()
  const { credits, reserved } = await deps.credits.balance(input.accountId)
  const firstCall = worstCaseCredits({ promptTokens: estimateTokens([{ role: 'user', content: body.message }]), maxTokens: deps.limits.maxTokens }, model)
  if (credits - reserved < firstCall) throw new InsufficientCreditsError({ available: credits - reserved, required: firstCall })
  const turnId = input.turnId ?? deps.newId()
  await deps.turns.start({
    turnId,
    accountId: input.accountId,
    agentId: agent.id,
    model: model.id,
    temperature: body.temperature ?? agent.temperature ?? null,
    stream: body.stream ?? false,
    maxRounds: deps.limits.maxRounds,
    tools,
    message: body.message,
  })
  return { turnId, stream: body.stream ?? false }
}

/** The answer object of a turn that ended (DESIGN §9): the text, the tool calls, usage and cost. */
export function chatAnswerOf(turn: ChatTurnState) {
  return {
    id: turn.id,
    role: 'assistant' as const,
    status: turn.status,
    content: turn.content,
    model: turn.model,
    toolCalls: turn.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: parseArguments(c.arguments), status: c.status, result: c.result })),
    usage: turn.usage,
    credits: turn.credits,
    cost: creditsToUsd(turn.credits),
  }
}

function parseArguments(raw: string): unknown {
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}
