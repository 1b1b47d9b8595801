import { assertNotListed } from '../agents/listedAgent.ts'
import { AgentDeletedError, InsufficientCreditsError, ModelProviderNotConfiguredError, ValidationError } from '../errors.ts'
import type { AgentRecord, AgentsRepository } from '../agents/ports.ts'
import type { CreditsRepository } from '../billing/ports.ts'
import { worstCaseCredits } from '../billing/modelCallCredits.ts'
import { estimateTokens } from './chatPrompt.ts'
import type { ChatModel } from './ports.ts'

/** What a chat turn and a run both check before they start. */
export type ModelLoopDeps = {
  agents: AgentsRepository
  /** The account's agent with its live status, its configuration from memory when fresh (404 for another account's). */
  agent(accountId: string, agentId: string): Promise<AgentRecord>
  models: ReadonlyMap<string, ChatModel>
  defaultModel: ChatModel
  provider: { readonly configured: boolean }
  credits: Pick<CreditsRepository, 'balance'>
  /**
   * What the agent's skills give its model: the tool names it may call (those its skills grant,
   * built-in and custom, among the `read` and `trade` tools) and their text for the system prompt.
   */
  agentSkills(accountId: string, skills: readonly string[]): Promise<{ tools: string[]; instructions: string }>
  limits: { maxTokens: number }
}

/**
 * The checks shared by a chat turn and a run, in order: the agent (404 for another account's, 409
 * when deleted), the model (422 unknown, or without tool support while the agent has tools), the
 * provider (503) and that the account covers the first model call's worst case (402).
 *
 * @example
 * const { agent, model, tools } = await checkModelLoop(deps, { accountId, agentId, model: body.model, firstMessage: body.message })
 */
export async function checkModelLoop(
  deps: ModelLoopDeps,
  input: {
    accountId: string
    agentId: string
    model: string | undefined
    firstMessage: string
    /** Refuse a listed agent, naming this action (a run). */
    refuseListed?: string | undefined
    /** The balance as the caller read it already (else read here). */
    balance?: { credits: number; reserved: number } | undefined
    /** The agent as the caller read it already (else read here). */
    agent?: AgentRecord | undefined
    /** `insert`: the balance is not read here; the caller's creation checks `firstCallCredits` in its own insert. */
    creditCheck?: 'read' | 'insert'
  },
): Promise<{ agent: AgentRecord; model: ChatModel; tools: string[]; instructions: string; firstCallCredits: number }> {
  // Both reads at once (the balance is only looked at once the agent passed).
  const balance = input.creditCheck === 'insert' ? undefined : input.balance ? Promise.resolve(input.balance) : deps.credits.balance(input.accountId)
  balance?.catch(() => {})
  const agent = input.agent ?? (await deps.agent(input.accountId, input.agentId))
  if (agent.status === 'deleted') throw new AgentDeletedError()
  if (input.refuseListed) assertNotListed(agent, input.refuseListed)
  const model = input.model !== undefined ? deps.models.get(input.model) : (deps.models.get(agent.model) ?? deps.defaultModel)
  if (!model) throw new ValidationError({ model: `Unknown model "${input.model}": see GET /models.` })
  const { tools, instructions } = await deps.agentSkills(input.accountId, agent.skills)
  if (tools.length > 0 && !model.supportsTools) {
    throw new ValidationError({ model: `Model "${model.id}" does not support tools, which this agent's skills grant; pick one with supportsTools.` })
  }
  if (!deps.provider.configured) throw new ModelProviderNotConfiguredError()
  const firstCall = worstCaseCredits({ promptTokens: estimateTokens([{ role: 'user', content: input.firstMessage }]), maxTokens: deps.limits.maxTokens }, model)
  if (balance) {
    const { credits, reserved } = await balance
    if (credits - reserved < firstCall) throw new InsufficientCreditsError({ available: credits - reserved, required: firstCall })
  }
  return { agent, model, tools, instructions, firstCallCredits: firstCall }
}
