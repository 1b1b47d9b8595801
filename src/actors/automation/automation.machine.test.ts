import { describe, expect, it } from 'vitest'
import { initialTransition, transition, type AnyMachineSnapshot } from 'xstate'
import type { AutomationInput } from '../../domain/automations/automation.types.ts'
import { AUTOMATION_DUE, AUTOMATION_FIRE, automationKind, automationMachine, LEGACY_DUE, PENDING_MAX } from './automation.machine.ts'
import { migrateAutomationSnapshot } from './automationMigrate.ts'
import { planActions } from '../runtime/index.ts'

type Act = { type: string; params?: any }
const T0 = Date.parse('2026-11-25T10:00:00.000Z')
const TIMER = AUTOMATION_DUE

const dca: AutomationInput = {
  automationId: 'a1', accountId: 'acc', agentId: 'g1', name: 'dca', description: null, kind: 'dca',
  trigger: { type: 'interval', everySeconds: 10 },
  action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '5' } },
  triggerOnce: false, catchUp: 'once', maxFirings: 3, maxSpendUsd: null, maxFailures: 2, createdAt: new Date(T0).toISOString(),
}

const start = (input: AutomationInput = dca) => initialTransition(automationMachine, input) as [AnyMachineSnapshot, Act[]]
/** The event at `t` (ms; default T0), as the runtime stamps it. */
const step = (s: AnyMachineSnapshot, e: Record<string, unknown>, t = T0) => transition(automationMachine, s, { ...e, at: new Date(t).toISOString() } as never) as [AnyMachineSnapshot, Act[]]
const status = (s: AnyMachineSnapshot) => automationKind.statusOf(s)
const delayOf = (acts: Act[]) => acts.find((a) => a.type === 'xstate.raise')?.params?.delay as number | undefined
const fire = (acts: Act[]) => acts.find((a) => a.type === AUTOMATION_FIRE)?.params
const iso = (t: number) => new Date(t).toISOString()

describe('the automation machine', () => {
  it('an interval fires on its grid: the firing starts a child, its end is recorded, the next tick is one period on', () => {
    const [s0, a0] = start()
    expect(status(s0)).toBe('armed')
    expect(delayOf(a0)).toBe(0)
    const [s1, a1] = step(s0, { type: TIMER })
    expect(status(s1)).toBe('executing')
    expect(fire(a1)).toEqual({ number: 1, source: { source: 'timer' } })
    const [s2] = step(s1, { type: 'fire.started', effectId: 'e', childId: 'op-1', result: {} })
    const [s3, a3] = step(s2, { type: 'child.done', childId: 'op-1', key: 'op-1', status: 'confirmed', output: { txHash: '0xa', error: null } }, T0 + 1500)
    expect(status(s3)).toBe('armed')
    expect(s3.context).toMatchObject({ runCount: 1, failuresInRow: 0, nextRunAt: new Date(T0 + 10_000).toISOString() })
    expect(s3.context.firings).toMatchObject([{ number: 1, outcome: 'ok', txHash: '0xa', childId: 'op-1', source: 'timer' }])
    expect(delayOf(a3)).toBe(8500)
  })

  it('a child that ends before the firing reports it is kept and matched', () => {
    const [s1] = step(start()[0], { type: TIMER })
    const [s2] = step(s1, { type: 'child.failed', childId: 'op-1', key: 'op-1', status: 'failed', output: { txHash: null, error: { code: 'transaction_reverted', message: 'no' } } })
    expect(status(s2)).toBe('executing')
    const [s3] = step(s2, { type: 'fire.started', effectId: 'e', childId: 'op-1', result: {} })
    expect(status(s3)).toBe('armed')
    expect(s3.context.firings[0]).toMatchObject({ outcome: 'failed', reason: 'transaction_reverted: no' })
    expect(s3.context.failuresInRow).toBe(1)
  })

  it('a firing that started a run is done at once, recorded with the run as its child', () => {
    const [s1] = step(start({ ...dca, action: { type: 'agent_prompt', prompt: 'rebalance' } })[0], { type: TIMER })
    const [s2] = step(s1, { type: 'fire.done', effectId: 'e', runId: 'run-1', result: { runId: 'run-1', status: 'running' } })
    expect(status(s2)).toBe('armed')
    expect(s2.context.firings).toMatchObject([{ number: 1, outcome: 'ok', childId: 'run-1', txHash: null }])
  })

  it('completes at max firings; goes error after maxFailures failures in a row, and resume re-arms it', () => {
    let [s] = start()
    for (let i = 0; i < 3; i++) {
      ;[s] = step(s, { type: 'automation.trigger', source: { source: 'manual' } })
      ;[s] = step(s, { type: 'fire.done', effectId: 'e', result: {} })
    }
    expect([status(s), s.context.completedReason, s.context.runCount]).toEqual(['completed', 'max_firings_reached', 3])

    ;[s] = start({ ...dca, maxFirings: null })
    for (let i = 0; i < 2; i++) {
      ;[s] = step(s, { type: 'automation.trigger', source: { source: 'manual' } })
      ;[s] = step(s, { type: 'fire.failed', effectId: 'e', code: 'slippage_exceeded', reason: 'moved' })
    }
    expect([status(s), s.context.lastError]).toEqual(['error', 'slippage_exceeded: moved'])
    const [r] = step(s, { type: 'automation.resume' })
    expect([status(r), r.context.failuresInRow]).toEqual(['armed', 0])
  })

  it('after downtime an overdue tick fires once under catch_up once, and is skipped to the next tick under skip', () => {
    const [once] = start()
    const [fired, a] = step(once, { type: TIMER }, T0 + 35_000)
    expect(fire(a)).toEqual({ number: 1, source: { source: 'timer' } })
    const [after] = step(fired, { type: 'fire.done', effectId: 'e', result: {} }, T0 + 35_000)
    expect(after.context.nextRunAt).toBe(new Date(T0 + 40_000).toISOString())

    const [skip] = start({ ...dca, catchUp: 'skip' })
    const [skipped, b] = step(skip, { type: TIMER }, T0 + 35_000)
    expect(fire(b)).toBeUndefined()
    expect([status(skipped), skipped.context.nextRunAt, skipped.context.firingNumber]).toEqual(['armed', new Date(T0 + 40_000).toISOString(), 0])
  })

  it('a firing in flight through an outage: once catches up with one firing, skip goes to the next tick', () => {
    for (const catchUp of ['once', 'skip'] as const) {
      const [s1] = step(start({ ...dca, catchUp, maxFirings: null })[0], { type: TIMER })
      // The grid moved past the tick as the firing started; the timer is overdue when it ends.
      const [s2, a2] = step(s1, { type: 'fire.done', effectId: 'e', result: {} }, T0 + 35_000)
      expect([s2.context.nextRunAt, delayOf(a2)]).toEqual([iso(T0 + 10_000), 0])
      const [s3, a3] = step(s2, { type: TIMER }, T0 + 35_000)
      if (catchUp === 'once') {
        expect([fire(a3)?.number, s3.context.current.tick]).toEqual([2, iso(T0 + 30_000)])
        const [s4] = step(s3, { type: 'fire.done', effectId: 'e', result: {} }, T0 + 36_000)
        expect(s4.context.firings.map((f: { catchUp: boolean }) => f.catchUp)).toEqual([false, true])
        expect(s4.context.nextRunAt).toBe(iso(T0 + 40_000))
      } else {
        expect([fire(a3), s3.context.nextRunAt, delayOf(a3)]).toEqual([undefined, iso(T0 + 40_000), 5000])
      }
    }
  })

  it('a tick that came due while the catch-up firing ran fires as itself, not as a second catch-up', () => {
    const [s1] = step(start({ ...dca, maxFirings: null })[0], { type: TIMER })
    // The service was down with firing 1 in flight; it comes back at T0 + 39 s (ticks every 10 s).
    const [s2] = step(s1, { type: 'fire.done', effectId: 'e', result: {} }, T0 + 39_000)
    const [s3] = step(s2, { type: TIMER }, T0 + 39_000)
    // The catch-up firing (for the tick at T0 + 30 s) ends after the tick at T0 + 40 s.
    const [s4, a4] = step(s3, { type: 'fire.done', effectId: 'e', result: {} }, T0 + 41_000)
    expect([s4.context.nextRunAt, delayOf(a4)]).toEqual([new Date(T0 + 40_000).toISOString(), 0])
    const [s5, a5] = step(s4, { type: TIMER }, T0 + 41_000)
    expect(fire(a5)?.number).toBe(3)
    const [s6] = step(s5, { type: 'fire.done', effectId: 'e', result: {} }, T0 + 42_000)
    expect(s6.context.firings.map((f: { catchUp: boolean }) => f.catchUp)).toEqual([false, true, false])
    expect(s6.context.nextRunAt).toBe(new Date(T0 + 50_000).toISOString())
  })

  it('a firing while the agent is not running is skipped and suspends the timer; the agent starting fires the missed tick once', () => {
    const [s1] = step(start()[0], { type: TIMER })
    const [s2, a2] = step(s1, { type: 'fire.skipped', effectId: 'e', reason: 'agent_not_running' })
    expect([status(s2), s2.context.suspended, s2.context.runCount]).toEqual(['armed', true, 0])
    expect(delayOf(a2)).toBeUndefined()
    expect(s2.context.nextRunAt).toBe(iso(T0))
    const [s3, a3] = step(s2, { type: 'automation.agentStarted' }, T0 + 60_000)
    expect(delayOf(a3)).toBe(0)
    const [s4, a4] = step(s3, { type: TIMER }, T0 + 60_000)
    expect(fire(a4)).toEqual({ number: 2, source: { source: 'timer' } })
    expect(status(s4)).toBe('executing')
  })

  it('triggers during a firing wait and fire one at a time after it; cancel during a firing ends it cancelled after', () => {
    const [s1] = step(start({ ...dca, maxFirings: null })[0], { type: 'automation.trigger', source: { source: 'manual' } })
    const [s2] = step(s1, { type: 'automation.trigger', source: { source: 'manual' } })
    expect(s2.context.pending).toHaveLength(1)
    const [s3, a3] = step(s2, { type: 'fire.done', effectId: 'e', result: {} })
    expect([status(s3), fire(a3)?.number]).toEqual(['executing', 2])
    const [s4] = step(s3, { type: 'automation.cancel' })
    expect(status(s4)).toBe('executing')
    const [s5] = step(s4, { type: 'fire.done', effectId: 'e', result: {} })
    expect([status(s5), s5.context.runCount]).toEqual(['cancelled', 2])
  })
  it('launches heard during a buy wait, as many as the buys left after it (up to PENDING_MAX), never more', () => {
    const sniperOf = (maxFirings: number) => start({ ...dca, maxFirings, trigger: { type: 'new_launch' } } as never)[0]
    const launch = (i: number) => ({ type: 'automation.trigger', source: { source: 'launch', token: { address: `0x${String(i).padStart(40, '0')}`, symbol: `L${i}`, venue: 'venue-a', quote: 'ETH', creator: '0x' } } })
    const burst = (s: ReturnType<typeof sniperOf>, n: number) => Array.from({ length: n }, (_, i) => launch(i)).reduce((x, e) => step(x, e as never)[0], s)
    // 30 buys: the first buys now, 25 more wait (10 was the old bound, and the 11th launch was never bought).
    expect(burst(sniperOf(30), 26).context.pending).toHaveLength(25)
    // 3 buys: one now, two wait; the rest could never be bought.
    expect(burst(sniperOf(3), 26).context.pending).toHaveLength(2)
    expect(burst(sniperOf(1000), PENDING_MAX + 20).context.pending).toHaveLength(PENDING_MAX)
  })
  it("an agent_prompt firing ends with its run: ok when the run completes, failed with the run's status when it runs out of budget", () => {
    const prompt = { ...dca, maxFirings: null, action: { type: 'agent_prompt', prompt: 'look around' } } as never
    const [s1] = step(start(prompt)[0], { type: 'automation.trigger', source: { source: 'manual' } })
    const [s2] = step(s1, { type: 'fire.started', effectId: 'e', childId: 'run-1', result: { runId: 'run-1', status: 'queued' } })
    expect(status(s2)).toBe('executing')
    const end = (type: 'child.done' | 'child.failed', childId: string, runStatus: string) => ({ type, childId, key: childId, status: runStatus, output: null })
    const [s3] = step(s2, end('child.done', 'run-1', 'completed'))
    expect([status(s3), s3.context.firings.at(-1)]).toEqual(['armed', expect.objectContaining({ number: 1, outcome: 'ok', childId: 'run-1' })])
    const [s4] = step(s3, { type: 'automation.trigger', source: { source: 'manual' } })
    const [s5] = step(s4, { type: 'fire.started', effectId: 'e', childId: 'run-2', result: {} })
    const [s6] = step(s5, end('child.failed', 'run-2', 'budget_exhausted'))
    expect(s6.context.firings.at(-1)).toMatchObject({ number: 2, outcome: 'failed', reason: 'budget_exhausted: run-2 ended budget_exhausted' })
  })
})

describe('the interval grid moves past the tick a timer firing serves, whatever follows the firing', () => {
  const hourly: AutomationInput = { ...dca, maxFirings: null, trigger: { type: 'interval', everySeconds: 3600, maxRuns: 3 } }
  const H = 3_600_000
  const done = { type: 'fire.done', effectId: 'e', result: {} }
  const manual = { type: 'automation.trigger', source: { source: 'manual' } }

  it('a trigger that waited behind the first timer firing fires after it; the timer then waits for the next tick', () => {
    const [s1] = step(start(hourly)[0], { type: TIMER })
    const [s2] = step(s1, manual, T0 + 1000)
    const [s3, a3] = step(s2, done, T0 + 2000)
    expect([status(s3), fire(a3)]).toEqual(['executing', { number: 2, source: { source: 'manual' } }])
    const [s4, a4] = step(s3, done, T0 + 3000)
    expect([status(s4), s4.context.runCount, s4.context.nextRunAt, delayOf(a4)]).toEqual(['armed', 2, iso(T0 + H), H - 3000])
  })

  it('a pause during a timer firing, then a resume within the period: the next firing is at the next tick', () => {
    const [s1] = step(start(hourly)[0], { type: TIMER })
    const [s2] = step(s1, { type: 'automation.pause' }, T0 + 1000)
    const [s3] = step(s2, done, T0 + 2000)
    expect(status(s3)).toBe('paused')
    const [s4, a4] = step(s3, { type: 'automation.resume' }, T0 + 5000)
    expect([status(s4), s4.context.nextRunAt, delayOf(a4)]).toEqual(['armed', iso(T0 + H), H - 5000])
    // Resumed hours later: the ticks missed while paused are one catch-up firing (`once`), then the grid.
    const [s5, a5] = step(s3, { type: 'automation.resume' }, T0 + 3 * H + 60_000)
    const [s6, a6] = step(s5, { type: TIMER }, T0 + 3 * H + 60_000)
    expect([delayOf(a5), fire(a6)?.number, s6.context.current.catchUp, s6.context.nextRunAt]).toEqual([0, 2, true, iso(T0 + 4 * H)])
  })

  it('a PATCH of the interval right after a timer firing, or during one, starts the new grid a new period on', () => {
    const every = (everySeconds: number) => ({ type: 'automation.update', changes: { trigger: { type: 'interval', everySeconds, maxRuns: 3 } } })
    const [s1] = step(start(hourly)[0], { type: TIMER })
    const [after, a] = step(step(s1, done, T0 + 1000)[0], every(1800), T0 + 2000)
    expect([status(after), after.context.nextRunAt, delayOf(a)]).toEqual(['armed', iso(T0 + 2000 + H / 2), H / 2])
    const [s2] = step(s1, every(1800), T0 + 1000)
    const [s3, a3] = step(s2, done, T0 + 2000)
    expect([status(s3), s3.context.nextRunAt, delayOf(a3)]).toEqual(['armed', iso(T0 + 1000 + H / 2), H / 2 - 1000])
    // Long after the last timer firing, a new interval starts now.
    const [s4, a4] = step(s3, every(600), T0 + H)
    expect([s4.context.nextRunAt, delayOf(a4)]).toEqual([iso(T0 + H), 0])
  })

  it('a skipped timer firing (the agent was not running) gives its tick back; a PATCH meanwhile keeps the new grid', () => {
    const [s1] = step(start(hourly)[0], { type: TIMER })
    const [s2] = step(s1, { type: 'fire.skipped', effectId: 'e', reason: 'agent_not_running' }, T0 + 1000)
    expect([s2.context.suspended, s2.context.nextRunAt]).toEqual([true, iso(T0)])
    const [p1] = step(s1, { type: 'automation.update', changes: { trigger: { type: 'interval', everySeconds: 1800 } } }, T0 + 500)
    const [p2] = step(p1, { type: 'fire.skipped', effectId: 'e', reason: 'agent_not_running' }, T0 + 1000)
    expect(p2.context.nextRunAt).toBe(iso(T0 + 500 + H / 2))
  })

  it('parseEvent stamps each event with the time it is taken in; a child keeps the time it ended', () => {
    const before = Date.now()
    const stamped = automationKind.parseEvent({ type: 'automation.pause', at: '2000-01-01T00:00:00.000Z' }) as unknown as { at: string }
    expect(Date.parse(stamped.at)).toBeGreaterThanOrEqual(before)
    const ended = { type: 'child.done', childId: 'op-1', key: 'op-1', status: 'confirmed', output: null, at: iso(T0) }
    expect(automationKind.parseEvent(ended)).toEqual(ended)
    expect(automationKind.parseEvent({ type: TIMER })).toMatchObject({ type: TIMER, at: expect.any(String) })
  })
})

describe('a version 1 snapshot', () => {
  const v1 = (value: unknown, context: Record<string, unknown>) => {
    const [s] = start()
    return { ...(automationMachine.getPersistedSnapshot(s) as object), value, context: { ...s.context, ...context } } as { value: unknown; context: any }
  }
  const timerRecord = (number: number, at: number) => ({ number, at: iso(at), source: 'timer', catchUp: false, outcome: 'ok', txHash: null, reason: null, childId: null })

  it('in a timer firing: its tick is moved past, as version 2 does when the firing starts', () => {
    const s = v1('executing', { nextRunAt: iso(T0), current: { number: 1, source: { source: 'timer' }, childId: null, result: null, catchUp: false } })
    const m = migrateAutomationSnapshot(s, 1) as typeof s
    expect([m.context.nextRunAt, m.context.current.tick]).toEqual([iso(T0 + 10_000), iso(T0)])
  })

  it('paused after a timer firing, or armed after a trigger that waited behind one: the tick served is moved past', () => {
    const paused = migrateAutomationSnapshot(v1('paused', { nextRunAt: iso(T0), firings: [timerRecord(1, T0 + 500)] }), 1) as { context: any }
    expect(paused.context.nextRunAt).toBe(iso(T0 + 10_000))
    const manualRecord = { ...timerRecord(2, T0 + 900), source: 'manual' }
    const armed = migrateAutomationSnapshot(v1({ armed: 'timed' }, { nextRunAt: iso(T0), firings: [timerRecord(1, T0 + 500), manualRecord] }), 1) as { context: any }
    expect(armed.context.nextRunAt).toBe(iso(T0 + 10_000))
    // Armed right after its timer firing, the tick came due while it ran: it stays, to fire now.
    const late = migrateAutomationSnapshot(v1({ armed: 'timed' }, { nextRunAt: iso(T0 + 10_000), firings: [timerRecord(1, T0 + 12_000)] }), 1) as { context: any }
    expect(late.context.nextRunAt).toBe(iso(T0 + 10_000))
  })

  it('armed with its version 1 timer: the runtime hands it that timer as automation.due, and drops it when automation.due is set again', () => {
    expect(automationKind.renamedTimers).toEqual({ [LEGACY_DUE]: AUTOMATION_DUE })
    expect(() => automationKind.parseEvent({ type: LEGACY_DUE })).toThrow()
    const restored = automationMachine.resolveState(migrateAutomationSnapshot(v1({ armed: 'timed' }, { nextRunAt: iso(T0 + 10_000) }), 1) as never)
    // Heard early (the grid says T0 + 10 s): armed again for then, nothing fired.
    const [s1, a1] = step(restored, { type: AUTOMATION_DUE }, T0 + 4000)
    expect([status(s1), delayOf(a1), fire(a1)]).toEqual(['armed', 6000, undefined])
    // A PATCH re-arms the timer before the old one fired: the old one goes with it.
    const [, a2] = step(restored, { type: 'automation.update', changes: { name: 'renamed' } }, T0 + 1000)
    const plan = planActions(automationKind, 'x', 5, a2, { [LEGACY_DUE]: 999_000 })
    expect([Object.keys(plan.timers), plan.timerDeletes]).toEqual([[AUTOMATION_DUE], [LEGACY_DUE]])
  })
})

