import { creditsToUsd } from '../billing/modelCallCredits.ts'
import type { ChatRequest } from './chat.schema.ts'
import { systemPromptOf } from './chatPrompt.ts'
import { checkModelLoop, type ModelLoopDeps } from './checkModelLoop.ts'
import type { ChatTurns, ChatTurnState } from './ports.ts'

export type ChatDeps = ModelLoopDeps & {
  turns: ChatTurns
  limits: { maxRounds: number; maxTokens: number }
  newId(): string
}

/** `turnId`: chosen by the caller when it must listen to the turn before it starts (streaming). */
export type StartChatTurnInput = { accountId: string; agentId: string; request: ChatRequest; turnId?: string | undefined }

/**
 * Starts a chat turn of an agent (running or stopped): checks the request, the agent (404 for
 * another account's, 409 when deleted), the model (422 unknown, or without tool support while
 * the agent has tools), the provider (503) and that the account can cover the first model
 * call's worst case (402); then creates the turn's actor with the user message.
 *
 * @example
 * const { turnId, stream } = await startChatTurn(deps, { accountId, agentId, request: { message: 'Buy 0.1 ETH of USDC' } })
 */
export async function startChatTurn(deps: ChatDeps, input: StartChatTurnInput): Promise<{ turnId: string; stream: boolean }> {
  const body = input.request
  // The balance is checked in the turn's own insert (402 when it does not cover the first call).
  const { agent, model, tools, instructions, firstCallCredits } = await checkModelLoop(deps, { accountId: input.accountId, agentId: input.agentId, model: body.model, firstMessage: body.message, creditCheck: 'insert' })
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
    system: systemPromptOf(agent, instructions),
    message: body.message,
  }, { coverCredits: firstCallCredits })
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
