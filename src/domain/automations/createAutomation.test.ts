import { describe, expect, it } from 'vitest'
import { asWritten, checkTiming } from './createAutomation.ts'
import type { CreateAutomationBody } from './automation.schema.ts'

const deps = { limits: { minIntervalSeconds: 60, maxFailures: 3 }, clock: { now: () => Date.parse('2026-11-26T12:00:00Z') } }

describe('automation checks', () => {
  it('an interval under AUTOMATION_MIN_INTERVAL_SECONDS is refused, naming the setting', () => {
    expect(checkTiming(deps, { type: 'interval', everySeconds: 30 })).toEqual({ 'trigger.everySeconds': 'At least 60 seconds (AUTOMATION_MIN_INTERVAL_SECONDS).' })
    expect(checkTiming(deps, { type: 'interval', everySeconds: 60 })).toEqual({})
  })

  it("a kind's problems are named as its client wrote them", () => {
    const dca = { name: 'x', kind: 'dca', dca: { tokenIn: 'ETH', tokenOut: 'X', amountPerRun: '1', everySeconds: 60 } } as CreateAutomationBody
    expect(asWritten(dca, { 'action.args.amountIn': 'a', 'action.args.tokenOut': 'b', 'trigger.everySeconds': 'c', kind: 'd' }))
      .toEqual({ 'dca.amountPerRun': 'a', 'dca.tokenOut': 'b', 'dca.everySeconds': 'c', kind: 'd' })
    const limit = (mint?: string) => ({ name: 'x', kind: 'limit', limit: { tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '5', priceUsd: '1', operator: 'lte', ...(mint ? { mint } : {}) } }) as CreateAutomationBody
    expect(asWritten(limit(), { 'trigger.mint': 'm', 'trigger.priceUsd': 'p' })).toEqual({ 'limit.tokenOut': 'm', 'limit.priceUsd': 'p' })
    expect(asWritten(limit('TSLAx'), { 'trigger.mint': 'm' })).toEqual({ 'limit.mint': 'm' })
    const sniper = { name: 'x', kind: 'sniper', sniper: { quote: 'ETH', amountIn: '0.1', maxBuys: 1 } } as CreateAutomationBody
    expect(asWritten(sniper, { 'action.args.tokenIn': 'q', 'action.args.amountIn': 'a' })).toEqual({ 'sniper.quote': 'q', 'sniper.amountIn': 'a' })
    // A body with its own trigger and action keeps their names.
    const custom = { name: 'x', trigger: { type: 'interval', everySeconds: 5 }, action: { type: 'tool_call', tool: 'get_portfolio', args: {} } } as CreateAutomationBody
    expect(asWritten(custom, { 'action.args.tokenOut': 'b' })).toEqual({ 'action.args.tokenOut': 'b' })
  })
})
