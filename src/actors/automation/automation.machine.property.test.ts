import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { initialTransition, transition, type AnyEventObject, type AnyMachineSnapshot } from 'xstate'
import type { AutomationInput } from '../../domain/automations/automation.types.ts'
import { AUTOMATION_FIRE, automationKind, automationMachine } from './automation.machine.ts'

/**
 * The pure automation machine under random interleavings of clock advances (its timer heard on
 * time, or late as after downtime), manual triggers, pause, resume, PATCHes (a new interval, or
 * other parameters), the ends of firings (ok or failed, reported by the effect or by the
 * firing's child) and restarts (the snapshot stored as JSON and loaded again), in any order. Time comes only in the events' `at`; the test keeps the clock
 * and the durable timer as the runtime does (a delayed raise is a timer, a cancel removes it).
 *
 * What must hold, the grid kept by the test itself (an interval's ticks every `everySeconds` from
 * its creation, or from the PATCH that set a new interval):
 * - the tick a timer firing serves (the latest one due when it fires) came due after the previous
 *   timer firing started: a tick never fires twice, and ticks missed together fire once;
 * - two timer firings are at least an interval apart, unless the first fired after its tick (the
 *   one catch-up after downtime, or a tick held back by a firing in flight, a pause or an outage:
 *   the next tick then stays on the grid);
 * - a catch-up firing only under `catch_up: once`;
 * - firing numbers are 1, 2, 3, ... each recorded once; runCount never exceeds maxRuns.
 */
const T0 = Date.parse('2026-11-25T10:00:00.000Z')
const iso = (t: number) => new Date(t).toISOString()

type Command =
  | { type: 'advance'; ms: number; late: boolean }
  | { type: 'trigger' }
  | { type: 'pause' }
  | { type: 'resume' }
  | { type: 'patch'; everySeconds: number | null }
  | { type: 'end'; ok: boolean; viaChild: boolean }
  | { type: 'restart' }

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 45_000 }), late: fc.boolean() }) },
  { weight: 2, arbitrary: fc.constant({ type: 'trigger' as const }) },
  { weight: 1, arbitrary: fc.constant({ type: 'pause' as const }) },
  { weight: 1, arbitrary: fc.constant({ type: 'resume' as const }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('patch' as const), everySeconds: fc.option(fc.constantFrom(10, 20, 30)) }) },
  { weight: 4, arbitrary: fc.record({ type: fc.constant('end' as const), ok: fc.boolean(), viaChild: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ type: 'restart' as const }) },
)

type Step = [AnyMachineSnapshot, { type: string; params?: any }[]]
type Firing = { number: number; source: string; at: number; tick: number; every: number; catchUp: boolean }

/** Runs the commands on the pure machine; answers the firings it started and its last snapshot. */
function run(input: AutomationInput, commands: Command[], maxRuns: number) {
  let now = T0
  let grid = { origin: T0, every: (input.trigger as { everySeconds: number }).everySeconds * 1000 }
  const timers = new Map<string, { due: number; event: AnyEventObject }>()
  const fired: Firing[] = []
  let [s, actions] = initialTransition(automationMachine, input) as Step
  const observe = () => {
    for (const a of actions) {
      if (a.type === 'xstate.raise' && typeof a.params?.delay === 'number') timers.set(String(a.params.id ?? a.params.event.type), { due: now + a.params.delay, event: a.params.event })
      if (a.type === 'xstate.cancel') timers.delete(String(a.params.sendId))
      if (a.type === AUTOMATION_FIRE) {
        const tick = grid.origin + Math.floor((now - grid.origin) / grid.every) * grid.every
        fired.push({ number: a.params.number, source: a.params.source.source, at: now, tick, every: grid.every, catchUp: s.context.current?.catchUp === true })
      }
    }
    expect(s.context.runCount).toBeLessThanOrEqual(maxRuns)
  }
  const send = (event: Record<string, unknown>) => {
    ;[s, actions] = transition(automationMachine, s, { ...event, at: iso(now) } as never) as Step
    observe()
  }
  const due = () => [...timers.entries()].sort((a, b) => a[1].due - b[1].due)[0]
  const hearDue = (until: number) => {
    for (let i = 0, next = due(); next && next[1].due <= until && i < 50; i++, next = due()) {
      now = Math.max(now, next[1].due)
      timers.delete(next[0])
      send(next[1].event)
    }
  }
  observe()
  for (const c of commands) {
    if (c.type === 'advance') {
      // On time: each timer heard when due. Late: the service was down until the end of the advance.
      const to = now + c.ms
      if (c.late) now = to
      hearDue(to)
      now = to
    } else if (c.type === 'trigger') send({ type: 'automation.trigger', source: { source: 'manual' } })
    else if (c.type === 'pause') send({ type: 'automation.pause' })
    else if (c.type === 'resume') send({ type: 'automation.resume' })
    // A new process loads the stored snapshot (JSON) and goes on from it; its timers are rows, kept.
    else if (c.type === 'restart') s = automationMachine.resolveState(JSON.parse(JSON.stringify(automationMachine.getPersistedSnapshot(s))))
    else if (c.type === 'patch' && c.everySeconds === null) send({ type: 'automation.update', changes: { name: `renamed at ${now}` } })
    else if (c.type === 'patch' && c.everySeconds !== null) {
      send({ type: 'automation.update', changes: { trigger: { type: 'interval', everySeconds: c.everySeconds, maxRuns } } })
      if (!AUTOMATION_FINAL_STATES.has(automationKind.statusOf(s))) grid = { origin: now, every: c.everySeconds * 1000 }
    } else if (c.type === 'end' && automationKind.statusOf(s) === 'executing') {
      const n = s.context.current.number as number
      if (c.viaChild) {
        send({ type: 'fire.started', effectId: `e${n}`, childId: `op-${n}`, result: {} })
        const output = c.ok ? { txHash: `0x${n}`, error: null } : { txHash: null, error: { code: 'transaction_reverted', message: 'reverted' } }
        send({ type: c.ok ? 'child.done' : 'child.failed', childId: `op-${n}`, key: `op-${n}`, status: c.ok ? 'confirmed' : 'failed', output })
      } else if (c.ok) send({ type: 'fire.done', effectId: `e${n}`, result: {} })
      else send({ type: 'fire.failed', effectId: `e${n}`, code: 'slippage_exceeded', reason: 'moved' })
    }
    if (c.type !== 'advance') hearDue(now)
  }
  return { fired, snapshot: s }
}

const AUTOMATION_FINAL_STATES = new Set(['completed', 'cancelled'])

const dcaOf = (everySeconds: number, maxRuns: number, catchUp: 'once' | 'skip'): AutomationInput => ({
  automationId: 'a1', accountId: 'acc', agentId: 'g1', name: 'dca', description: null, kind: 'dca',
  trigger: { type: 'interval', everySeconds, maxRuns },
  action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'USDC', tokenOut: 'TSLAx', amountIn: '1' } },
  triggerOnce: false, catchUp, maxFirings: null, maxSpendUsd: null, maxFailures: 2, createdAt: iso(T0),
})

describe('the automation machine, under any interleaving', () => {
  it('keeps its interval grid: no tick fired twice, missed ticks fired once, runs within maxRuns, firings numbered 1, 2, 3, ...', () => {
    const scenario = fc.record({
      everySeconds: fc.constantFrom(10, 20),
      maxRuns: fc.integer({ min: 3, max: 8 }),
      catchUp: fc.constantFrom('once' as const, 'skip' as const),
      commands: fc.array(command, { maxLength: 40 }),
    })
    fc.assert(
      fc.property(scenario, ({ everySeconds, maxRuns, catchUp, commands }) => {
        const { fired, snapshot } = run(dcaOf(everySeconds, maxRuns, catchUp), commands, maxRuns)
        expect(fired.map((f) => f.number)).toEqual(fired.map((_, i) => i + 1))
        expect(fired.length).toBeLessThanOrEqual(maxRuns)
        expect(snapshot.context.firings.map((f: { number: number }) => f.number)).toEqual(snapshot.context.firings.map((_: unknown, i: number) => i + 1))
        const timer = fired.filter((f) => f.source === 'timer')
        for (const [i, b] of timer.entries()) {
          if (b.catchUp) expect(catchUp).toBe('once')
          const a = timer[i - 1]
          if (!a) continue
          const pair = `timer firings ${a.number} at +${a.at - T0} ms and ${b.number} at +${b.at - T0} ms`
          expect(b.tick, `${pair}: the tick ${b.number} serves (+${b.tick - T0} ms) came due after ${a.number} started`).toBeGreaterThan(a.at)
          if (a.at === a.tick) expect(b.at - a.at, `${pair}: an interval (${b.every} ms) apart`).toBeGreaterThanOrEqual(b.every)
        }
      }),
      { numRuns: 400 },
    )
  })
})
