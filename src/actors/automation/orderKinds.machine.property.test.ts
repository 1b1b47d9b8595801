import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { initialTransition, transition, type AnyMachineSnapshot } from 'xstate'
import type { AutomationInput } from '../../domain/automations/automation.types.ts'
import { AUTOMATION_DUE, AUTOMATION_FIRE, automationKind, automationMachine } from './automation.machine.ts'

/**
 * Protective and sliced orders on the pure machine under random interleavings of block prices,
 * timer ticks, firing ends (ok, failed, skipped with or without counting; by the effect or the
 * firing's child), pause, resume, manual triggers and restarts (the snapshot through JSON). What
 * must hold:
 * - a trailing stop's `high` is the highest price it heard while armed (never lower), and a price
 *   firing starts only at or under its level from that high;
 * - a bracket's price firing names the side its price met; at most one firing sells (ok), after
 *   which nothing fires again;
 * - a TWAP serves slices 1, 2, ... in order; a slice is served again only after a firing that did
 *   not count (the agent was not running); never more than `slices` slices count.
 */
const T0 = Date.parse('2026-11-25T10:00:00.000Z')
const iso = (t: number) => new Date(t).toISOString()
type Step = [AnyMachineSnapshot, { type: string; params?: any }[]]
type Command =
  | { type: 'price'; priceUsd: number }
  | { type: 'due' }
  | { type: 'end'; outcome: 'ok' | 'failed' | 'skipped' | 'counted'; viaChild: boolean }
  | { type: 'pause' | 'resume' | 'trigger' | 'restart' | 'agentStarted' }

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ type: fc.constant('price' as const), priceUsd: fc.integer({ min: 70, max: 140 }) }) },
  { weight: 3, arbitrary: fc.constant({ type: 'due' as const }) },
  { weight: 4, arbitrary: fc.record({ type: fc.constant('end' as const), outcome: fc.constantFrom('ok' as const, 'failed' as const, 'skipped' as const, 'counted' as const), viaChild: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constantFrom(...(['pause', 'resume', 'trigger', 'restart', 'agentStarted'] as const).map((type) => ({ type }))) },
)

const base = {
  accountId: 'acc', agentId: 'g1', description: null, catchUp: 'once', maxFirings: null, maxSpendUsd: null, maxFailures: 3, createdAt: iso(T0),
  action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'TSLAx', tokenOut: 'USDC' } },
} as const
const inputs: Record<'trailing' | 'bracket' | 'twap', AutomationInput> = {
  trailing: { ...base, automationId: 't', name: 't', kind: 'trailing_stop', triggerOnce: true, trigger: { type: 'trailing_stop', mint: 'X', trailPct: 10 }, order: { share: 1, armedPriceUsd: '100' } },
  bracket: { ...base, automationId: 'b', name: 'b', kind: 'bracket', triggerOnce: true, trigger: { type: 'bracket', mint: 'X', takeProfitUsd: '120', stopLossUsd: '90' }, order: { share: 1, armedPriceUsd: '100' } },
  twap: { ...base, automationId: 'w', name: 'w', kind: 'twap', triggerOnce: false, trigger: { type: 'interval', everySeconds: 2, maxRuns: 4 }, order: { twap: { amountIn: '1', slices: 4, maxPriceImpactBps: 100 } } },
}

type Fired = { number: number; source: any; slice?: number; high?: string | null; countedBefore: number }

function run(input: AutomationInput, commands: Command[]) {
  let now = T0
  let [s, actions] = initialTransition(automationMachine, input) as Step
  const fired: Fired[] = []
  const heard: number[] = []
  let counted = 0
  const send = (e: Record<string, unknown>) => {
    now += 1000
    ;[s, actions] = transition(automationMachine, s, { ...e, at: iso(now) } as never) as Step
    for (const a of actions) if (a.type === AUTOMATION_FIRE) fired.push({ ...a.params, high: s.context.high, countedBefore: counted })
  }
  for (const c of commands) {
    const status = automationKind.statusOf(s)
    if (c.type === 'price') {
      if (status === 'armed') heard.push(c.priceUsd)
      send({ type: 'automation.price', block: String(now), priceUsd: String(c.priceUsd) })
    } else if (c.type === 'due') send({ type: AUTOMATION_DUE })
    else if (c.type === 'restart') s = automationMachine.resolveState(JSON.parse(JSON.stringify(automationMachine.getPersistedSnapshot(s))))
    else if (c.type === 'trigger') send({ type: 'automation.trigger', source: { source: 'manual' } })
    else if (c.type !== 'end') send({ type: `automation.${c.type}` })
    else if (status === 'executing') {
      const n = s.context.current.number as number
      if (c.outcome !== 'skipped') counted++
      if (c.outcome === 'ok' && c.viaChild) {
        send({ type: 'fire.started', effectId: `e${n}`, childId: `op-${n}`, result: {} })
        send({ type: 'child.done', childId: `op-${n}`, key: `op-${n}`, status: 'confirmed', output: { txHash: `0x${n}`, error: null } })
      } else if (c.outcome === 'ok') send({ type: 'fire.done', effectId: `e${n}`, result: {} })
      else if (c.outcome === 'failed') send({ type: 'fire.failed', effectId: `e${n}`, code: 'slippage_exceeded', reason: 'moved' })
      else send({ type: 'fire.skipped', effectId: `e${n}`, reason: 'r', ...(c.outcome === 'counted' ? { counted: true } : {}) })
    }
  }
  return { s, fired, heard, counted }
}

const scenario = fc.array(command, { maxLength: 40 })
const settings = { numRuns: 300 }

describe('protective and sliced orders, under any interleaving', () => {
  it('a trailing stop: high is the highest price heard while armed; it fires only at or under its level', () => {
    fc.assert(fc.property(scenario, (commands) => {
      const { s, fired, heard } = run(inputs.trailing, commands)
      expect(Number(s.context.high)).toBe(Math.max(100, ...heard))
      for (const f of fired.filter((x) => x.source.source === 'price')) expect(Number(f.source.priceUsd)).toBeLessThanOrEqual(Number(f.high) * 0.9 + 1e-9)
      expect(s.context.firings.filter((f: { outcome: string }) => f.outcome === 'ok').length).toBeLessThanOrEqual(1)
    }), settings)
  })

  it('a bracket: each price firing names the side its price met; at most one sells, and nothing fires after it', () => {
    fc.assert(fc.property(scenario, (commands) => {
      const { s, fired } = run(inputs.bracket, commands)
      for (const f of fired.filter((x) => x.source.source === 'price')) {
        const p = Number(f.source.priceUsd)
        expect(f.source.side).toBe(p <= 90 ? 'stop_loss' : 'take_profit')
        if (f.source.side === 'take_profit') expect(p).toBeGreaterThanOrEqual(120)
      }
      const firings = s.context.firings as Array<{ number: number; outcome: string }>
      const sold = firings.filter((f) => f.outcome === 'ok')
      expect(sold.length).toBeLessThanOrEqual(1)
      if (sold[0]) expect(fired.at(-1)!.number).toBe(sold[0].number)
    }), settings)
  })

  it('a TWAP: each firing serves the slice after those that counted; never more than its slices count', () => {
    fc.assert(fc.property(scenario, (commands) => {
      const { s, fired, counted } = run(inputs.twap, commands)
      for (const f of fired) expect(f.slice).toBe(f.countedBefore + 1)
      expect(counted).toBeLessThanOrEqual(4)
      expect(s.context.runCount).toBe(counted)
      if (counted === 4) expect(automationKind.statusOf(s)).toBe('completed')
    }), settings)
  })
})

