import { describe, expect, it } from 'vitest'
import { initialTransition, transition, type AnyMachineSnapshot } from 'xstate'
import { chatTurnMachine, type ChatTurnInput } from './chatTurn.machine.ts'

const input: ChatTurnInput = {
  turnId: 't1', accountId: 'a1', agentId: 'g1', model: 'gpt-4o-mini', temperature: null, stream: false, maxRounds: 2, tools: ['swap_execute'], system: 'You are g1.', message: 'buy',
}
const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 }
type Act = { type: string; params?: unknown }

describe('the chat turn machine', () => {
  it('thinks, acts on each tool call, thinks again and completes; sums usage and credits', () => {
    const [s0, a0] = initialTransition(chatTurnMachine, input) as [AnyMachineSnapshot, Act[]]
    expect(s0.value).toBe('thinking')
    expect(a0.map((a) => a.type)).toEqual(['chat.model'])
    const calls = [{ id: 'c1', name: 'swap_execute', arguments: '{}' }, { id: 'c2', name: 'get_agent', arguments: '{}' }]
    const [s1, a1] = transition(chatTurnMachine, s0, { type: 'model.done', effectId: 'e1', content: '', toolCalls: calls, model: 'm', usage, credits: 2 }) as [AnyMachineSnapshot, Act[]]
    expect(s1.value).toBe('acting')
    expect(a1).toEqual([
      expect.objectContaining({ type: 'chat.tool', params: { callId: 'c1', key: '1.0', name: 'swap_execute', arguments: '{}' } }),
      expect.objectContaining({ type: 'chat.tool', params: { callId: 'c2', key: '1.1', name: 'get_agent', arguments: '{}' } }),
    ])
    const [s2] = transition(chatTurnMachine, s1, { type: 'tool.done', effectId: 'e2', callId: 'c2', key: '1.1', status: 'refused', result: { code: 'tool_not_granted' } })
    expect(s2.value).toBe('acting')
    const [s3, a3] = transition(chatTurnMachine, s2, { type: 'tool.done', effectId: 'e3', callId: 'c1', key: '1.0', status: 'ok', result: { txHash: '0x1' } }) as [AnyMachineSnapshot, Act[]]
    expect(s3.value).toBe('thinking')
    expect(s3.context.round).toBe(2)
    expect(a3.map((a) => a.type)).toEqual(['chat.model'])
    // The last round's tool calls are skipped: the turn ends with what it has.
    const [s4] = transition(chatTurnMachine, s3, { type: 'model.done', effectId: 'e4', content: 'done', toolCalls: [{ id: 'c3', name: 'swap_execute', arguments: '{}' }], model: 'm', usage, credits: 3 })
    expect(s4.value).toBe('completed')
    expect(s4.context).toMatchObject({ content: 'done', credits: 5, usage: { totalTokens: 30 } })
    expect(s4.context.toolCalls.map((c: { id: string; status: string }) => [c.id, c.status])).toEqual([['c1', 'ok'], ['c2', 'refused'], ['c3', 'skipped']])
    expect(s4.context.transcript.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant'])
  })

  it('keeps two calls the model named alike apart by their keys, and waits in acting for the child a call started', () => {
    const [s0] = initialTransition(chatTurnMachine, input)
    const calls = [{ id: 'call_0', name: 'swap_execute', arguments: '{"a":1}' }, { id: 'call_0', name: 'swap_execute', arguments: '{"a":2}' }]
    const [s1] = transition(chatTurnMachine, s0, { type: 'model.done', effectId: 'e1', content: '', toolCalls: calls, model: 'm', usage, credits: 1 })
    expect(s1.context.pending).toEqual(['1.0', '1.1'])
    // The first call's swap started; its end arrives later.
    const [s2, a2] = transition(chatTurnMachine, s1, { type: 'tool.started', effectId: 'e1:2:0', callId: 'call_0', key: '1.0', childId: 'op-1', result: { id: 'op-1', status: 'submitting' } }) as [AnyMachineSnapshot, Act[]]
    expect(s2.value).toBe('acting')
    expect(a2).toEqual([])
    // The second call's swap ended before its call reported it started: the end is kept for it.
    const [s3] = transition(chatTurnMachine, s2, { type: 'child.failed', childId: 'op-2', key: 'op-2', status: 'failed', output: { txHash: '0x2', error: { code: 'transaction_reverted', message: 'reverted' } }, at: 't3' })
    expect(s3.context.earlyEnds).toHaveProperty('op-2')
    const [s4, a4] = transition(chatTurnMachine, s3, { type: 'tool.started', effectId: 'e1:2:1', callId: 'call_0', key: '1.1', childId: 'op-2', result: { id: 'op-2', status: 'submitting' } }) as [AnyMachineSnapshot, Act[]]
    expect(s4.value).toBe('acting')
    expect(s4.context.earlyEnds).toEqual({})
    expect(a4).toEqual([expect.objectContaining({ type: 'chat.tool.result', params: expect.objectContaining({ messageKey: 'tool:e1:2:1', status: 'failed' }) })])
    const [s5, a5] = transition(chatTurnMachine, s4, { type: 'child.done', childId: 'op-1', key: 'op-1', status: 'confirmed', output: { txHash: '0x1', error: null }, at: 't5' }) as [AnyMachineSnapshot, Act[]]
    expect(s5.value).toBe('thinking')
    expect(a5.map((a) => a.type)).toEqual(['chat.tool.result', 'chat.model'])
    expect(s5.context.toolCalls.map((c: { key: string; status: string; result: { txHash: string; status: string } }) => [c.key, c.status, c.result.status, c.result.txHash])).toEqual([
      ['1.0', 'ok', 'confirmed', '0x1'],
      ['1.1', 'failed', 'failed', '0x2'],
    ])
    // The model is told each call's own outcome, in the order they ended.
    expect(s5.context.transcript.filter((m: { role: string }) => m.role === 'tool').map((m: { content: string }) => JSON.parse(m.content).txHash)).toEqual(['0x2', '0x1'])
  })

  it('fails with the provider error', () => {
    const [s0] = initialTransition(chatTurnMachine, input)
    const [s1] = transition(chatTurnMachine, s0, { type: 'model.failed', effectId: 'e1', error: { code: 'model_provider_error', message: 'x', status: 502 } })
    expect(s1.value).toBe('failed')
    expect(s1.context.error).toEqual({ code: 'model_provider_error', message: 'x', status: 502 })
  })
})
