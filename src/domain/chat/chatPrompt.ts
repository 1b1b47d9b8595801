import type { ModelMessage, ModelTool } from './ports.ts'

/**
 * A rough token count: about four characters per token (English text and JSON with common
 * tokenizers), plus a few tokens per message for its framing. Used to bound the history and to
 * size the credit reservation; the bill itself comes from the provider's reported usage.
 *
 * @example
 * estimateTokens([{ role: 'user', content: 'hello there' }]) // 3 + 4
 */
export function estimateTokens(messages: readonly ModelMessage[], tools: readonly ModelTool[] = []): number {
  let chars = 0
  for (const m of messages) {
    chars += (m.content ?? '').length + 16
    if (m.role === 'assistant') for (const c of m.toolCalls ?? []) chars += c.name.length + c.arguments.length + 16
  }
  for (const t of tools) chars += t.name.length + t.description.length + JSON.stringify(t.parameters).length
  return Math.ceil(chars / 4)
}

/**
 * The system prompt of a chat turn or a run: who the agent is, its owner's system prompt, and its
 * skills' text (`resolveAgentSkills`: built-in instructions, custom skills delimited as untrusted).
 */
export function systemPromptOf({ name, systemPrompt }: { name: string; systemPrompt: string | null }, skills: string): string {
  const parts = [
    `You are ${name}, a trading agent with a custodial wallet. You act only through the tools you are given; ` +
      'each acts for this agent alone and within its policy. When a tool refuses, say why and do not work around it.',
  ]
  if (systemPrompt) parts.push(`Your owner's instructions:\n${systemPrompt}`)
  if (skills) parts.push(`Your skills:\n\n${skills}`)
  return parts.join('\n\n')
}

/**
 * The messages of one model call: the system prompt, as much recent history as fits, then this
 * turn's messages. The budget is the model's context window less the completion's `maxTokens`,
 * the system prompt, the tools and this turn; the oldest history goes first.
 *
 * @param history earlier messages of the agent, newest first
 */
export function composePrompt(input: {
  system: string
  history: readonly ModelMessage[]
  turn: readonly ModelMessage[]
  tools: readonly ModelTool[]
  contextWindow: number
  maxTokens: number
}): ModelMessage[] {
  const system: ModelMessage = { role: 'system', content: input.system }
  let budget = input.contextWindow - input.maxTokens - estimateTokens([system, ...input.turn], input.tools)
  const kept: ModelMessage[] = []
  for (const m of input.history) {
    budget -= estimateTokens([m])
    if (budget < 0) break
    kept.push(m)
  }
  return [system, ...kept.reverse(), ...input.turn]
}
