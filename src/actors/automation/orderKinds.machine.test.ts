import { describe, expect, it } from 'vitest'
import { initialTransition, transition, type AnyMachineSnapshot } from 'xstate'
import type { AutomationInput } from '../../domain/automations/automation.types.ts'
import type { AutomationState } from '../../domain/automations/ports.ts'
import { orderView } from '../../domain/automations/orderView.ts'
import { AUTOMATION_DUE, AUTOMATION_FIRE, automationKind, automationMachine } from './automation.machine.ts'

type Act = { type: string; params?: any }
const T0 = Date.parse('2026-11-25T10:00:00.000Z')
const base = {
  accountId: 'acc', agentId: 'g1', description: null, catchUp: 'once', maxFirings: null, maxSpendUsd: null, maxFailures: 3, createdAt: new Date(T0).toISOString(),
  action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'TSLAx', tokenOut: 'USDC' } },
} as const
const trailing: AutomationInput = {
  ...base, automationId: 't1', name: 'trail', kind: 'trailing_stop', triggerOnce: true,
  trigger: { type: 'trailing_stop', mint: 'TSLAx', trailPct: 10 }, order: { share: 0.5, armedPriceUsd: '100' },
}
const bracket: AutomationInput = {
  ...base, automationId: 'b1', name: 'bracket', kind: 'bracket', triggerOnce: true,
  trigger: { type: 'bracket', mint: 'TSLAx', takeProfitUsd: '120', stopLossUsd: '90' }, order: { share: 1, armedPriceUsd: '100' },
}
const twap: AutomationInput = {
  ...base, automationId: 'w1', name: 'twap', kind: 'twap', triggerOnce: false,
  trigger: { type: 'interval', everySeconds: 2, maxRuns: 5 }, order: { twap: { amountIn: '1', slices: 5, maxPriceImpactBps: 100 } },
}

const start = (input: AutomationInput) => initialTransition(automationMachine, input) as [AnyMachineSnapshot, Act[]]
const step = (s: AnyMachineSnapshot, e: Record<string, unknown>, t = T0) => transition(automationMachine, s, { ...e, at: new Date(t).toISOString() } as never) as [AnyMachineSnapshot, Act[]]
const price = (s: AnyMachineSnapshot, p: string, block: number) => step(s, { type: 'automation.price', block: String(block), priceUsd: p })
const status = (s: AnyMachineSnapshot) => automationKind.statusOf(s)
const fire = (acts: Act[]) => acts.find((a) => a.type === AUTOMATION_FIRE)?.params
const view = (s: AnyMachineSnapshot) => orderView({ ...s.context, status: status(s) } as AutomationState)
const done = (s: AnyMachineSnapshot, childId: string) => {
  const [s1] = step(s, { type: 'fire.started', effectId: 'e', childId, result: {} })
  return step(s1, { type: 'child.done', childId, key: childId, status: 'confirmed', output: { txHash: '0xa', error: null } })[0]
}
/** A persist -> restore round trip through JSON. */
const roundTrip = (s: AnyMachineSnapshot) => automationMachine.resolveState(JSON.parse(JSON.stringify(automationMachine.getPersistedSnapshot(s))))

describe('protective and sliced orders in the automation machine', () => {
  it('a trailing stop keeps the highest price of its events and fires once the price falls trailPct from it', () => {
    let [s] = start(trailing)
    expect(s.context.high).toBe('100')
    ;[s] = price(s, '110', 1)
    ;[s] = price(s, '125', 2)
    ;[s] = price(s, '115', 3)
    expect(status(s)).toBe('armed')
    expect(view(s)).toMatchObject({ high: '125', level: '112.5', share: 0.5, trailPct: 10 })
    s = roundTrip(s)
    let acts: Act[]
    ;[s, acts] = price(s, '112.5', 4)
    expect(status(s)).toBe('executing')
    expect(fire(acts)).toEqual({ number: 1, source: { source: 'price', block: '4', priceUsd: '112.5' } })
    expect(s.context.high).toBe('125')
    // Prices heard while it sells change nothing; the sale completes it.
    ;[s] = price(s, '200', 5)
    expect(s.context.high).toBe('125')
    s = done(s, 'op-1')
    expect(status(s)).toBe('completed')
    expect(s.context.completedReason).toBe('fired_once')
  })

  it('a trailing stop by USD fires at high - trailUsd', () => {
    let [s] = start({ ...trailing, trigger: { type: 'trailing_stop', mint: 'TSLAx', trailUsd: '7' } })
    ;[s] = price(s, '93.01', 1)
    expect(status(s)).toBe('armed')
    ;[s] = price(s, '93', 2)
    expect(status(s)).toBe('executing')
  })

  it('a bracket fires one side; the other is cancelled in the same transition, and a later crossing of it fires nothing', () => {
    let [s] = start(bracket)
    ;[s] = price(s, '100', 1)
    expect(status(s)).toBe('armed')
    expect(view(s)).toMatchObject({ takeProfit: { level: '120', status: 'waiting' }, stopLoss: { level: '90', status: 'waiting' } })
    let acts: Act[]
    ;[s, acts] = price(s, '121', 2)
    expect(fire(acts).source).toEqual({ source: 'price', block: '2', priceUsd: '121', side: 'take_profit' })
    expect(view(s)).toMatchObject({ takeProfit: { status: 'firing' }, stopLoss: { status: 'cancelled' } })
    // Both sides crossing before the firing ends (the next block under the stop): no second firing.
    ;[s, acts] = price(s, '80', 3)
    expect(fire(acts)).toBeUndefined()
    s = done(roundTrip(s), 'op-1')
    expect(status(s)).toBe('completed')
    expect(s.context.firings).toMatchObject([{ number: 1, outcome: 'ok', side: 'take_profit' }])
    expect(view(s)).toMatchObject({ takeProfit: { status: 'filled' }, stopLoss: { status: 'cancelled' } })
  })

  it('a bracket whose firing failed sold nothing: both sides wait again', () => {
    let [s] = start(bracket)
    ;[s] = price(s, '89', 1)
    ;[s] = step(s, { type: 'fire.failed', effectId: 'e', code: 'slippage_exceeded', reason: 'no' })
    expect(status(s)).toBe('armed')
    expect(view(s)).toMatchObject({ takeProfit: { status: 'waiting' }, stopLoss: { status: 'waiting' } })
    let acts: Act[]
    ;[s, acts] = price(s, '130', 2)
    expect(fire(acts).source.side).toBe('take_profit')
  })

  it('a TWAP numbers its slices; a slice skipped for its price impact counts, one skipped while the agent is stopped does not', () => {
    let [s, acts] = start(twap)
    ;[s, acts] = step(s, { type: AUTOMATION_DUE })
    expect(fire(acts)).toEqual({ number: 1, source: { source: 'timer' }, slice: 1 })
    s = done(s, 'op-1')
    ;[s, acts] = step(s, { type: AUTOMATION_DUE }, T0 + 2000)
    expect(fire(acts).slice).toBe(2)
    ;[s] = step(s, { type: 'fire.skipped', effectId: 'e', reason: 'price_impact_exceeded: ...', counted: true }, T0 + 2100)
    expect(view(s)).toMatchObject({ slices: 5, slicesDone: 2, slicesLeft: 3 })
    expect(s.context.firings.at(-1)).toMatchObject({ outcome: 'skipped', slice: 2, reason: 'price_impact_exceeded: ...' })
    ;[s, acts] = step(s, { type: AUTOMATION_DUE }, T0 + 4000)
    expect(fire(acts).slice).toBe(3)
    ;[s] = step(s, { type: 'fire.skipped', effectId: 'e', reason: 'agent_not_running: the agent is stopped' }, T0 + 4100)
    expect(view(s)).toMatchObject({ slicesDone: 2, slicesLeft: 3 })
    ;[s] = step(s, { type: 'automation.agentStarted' }, T0 + 5000)
    ;[s, acts] = step(s, { type: AUTOMATION_DUE }, T0 + 5000)
    expect(fire(acts)).toMatchObject({ number: 4, slice: 3 })
    for (const [i, at] of [[3, 5100], [4, 6000], [5, 8000]] as const) {
      if (i > 3) [s, acts] = step(s, { type: AUTOMATION_DUE }, T0 + at)
      expect(fire(acts).slice).toBe(i)
      s = done(s, `op-${i}`)
    }
    expect(status(s)).toBe('completed')
    expect(view(s)).toMatchObject({ slicesDone: 5, slicesLeft: 0 })
  })
})
