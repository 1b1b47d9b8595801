import { describe, expect, it } from 'vitest'
import { composePrompt, estimateTokens, systemPromptOf } from './chatPrompt.ts'
import type { ModelMessage } from './ports.ts'

describe('the chat prompt', () => {
  it('estimates about four characters per token plus framing', () => {
    expect(estimateTokens([{ role: 'user', content: 'x'.repeat(400) }])).toBe(104)
    expect(estimateTokens([], [{ name: 'get_agent', description: 'd', parameters: {} }])).toBe(3)
  })

  it('names the agent, its owner prompt and its skills', () => {
    const s = systemPromptOf({ name: 'Ada', systemPrompt: 'Be brief.' }, '## Skill: Trading\nQuote first.')
    expect(s).toContain('You are Ada')
    expect(s).toContain("owner's instructions:\nBe brief.")
    expect(s).toContain('Your skills:\n\n## Skill: Trading\nQuote first.')
    expect(systemPromptOf({ name: 'Ada', systemPrompt: null }, '')).not.toContain('Your skills')
  })

  it('keeps the newest history that fits the context window, in order, before this turn', () => {
    const history: ModelMessage[] = Array.from({ length: 10 }, (_, i) => ({ role: 'user' as const, content: `${i}`.padEnd(384, '.') }))
    const turn: ModelMessage[] = [{ role: 'user', content: 'now' }]
    const all = composePrompt({ system: 'sys', history, turn, tools: [], contextWindow: 100_000, maxTokens: 1000 })
    expect(all).toHaveLength(12)
    const bounded = composePrompt({ system: 'sys', history, turn, tools: [], contextWindow: 1000 + 10 + 3 * 100, maxTokens: 1000 })
    expect(bounded.map((m) => m.content?.[0])).toEqual(['s', '2', '1', '0', 'n'])
  })
})
