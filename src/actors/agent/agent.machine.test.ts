import { describe, expect, it } from 'vitest'
import { createActor, initialTransition, SimulatedClock, transition, type AnyMachineSnapshot } from 'xstate'
import { planActions } from '../runtime/index.ts'
import { AGENT_AUTOMATIONS, AGENT_DUE, AGENT_RUN_DUE, AUTOMATIONS_WAITING, CHECK_RETRY_MS, LEGACY_TICK, MARKET_SOLD, agentKind, agentMachine, migrateAgentSnapshot } from './agent.machine.ts'

const input = { agentId: 'a1', accountId: 'acc' }
type Action = { type: string; params?: unknown }
const types = (actions: Action[]) => actions.map((a) => a.type)
const raised = (actions: Action[]) => actions.filter((a) => a.type === 'xstate.raise').map((a) => a.params)
const cancelled = (actions: Action[]) => actions.filter((a) => a.type === 'xstate.cancel').map((a) => (a.params as { sendId: string }).sendId)
const skipped = (nextRunInMs: number | null, extra: Record<string, unknown> = {}) =>
  ({ type: 'agent.run.skipped', effectId: 'fx', reason: 'not_due', runIntervalSeconds: 2, nextRunInMs, dueAt: nextRunInMs === null ? null : '2026-11-26T10:00:02.000Z', ...extra }) as const

function roundTrip(snapshot: AnyMachineSnapshot): AnyMachineSnapshot {
  const json = JSON.parse(JSON.stringify(agentMachine.getPersistedSnapshot(snapshot)))
  return agentMachine.resolveState(json)
}

function running() {
  const [s0] = initialTransition(agentMachine, input)
  return transition(agentMachine, s0, { type: 'agent.start' })
}

describe('agent machine', () => {
  it('starts stopped with no actions', () => {
    const [s, actions] = initialTransition(agentMachine, input)
    expect(s.value).toBe('stopped')
    expect(actions).toEqual([])
    expect(s.context).toMatchObject({ agentId: 'a1', reason: null })
  })

  it('start checks the schedule at once and arms no timer until the check says when', () => {
    const [s1, a1] = running()
    expect(s1.value).toBe('running')
    expect(types(a1)).toContain(AGENT_RUN_DUE)
    expect(raised(a1)).toEqual([])
  })

  it("a check's outcome arms the one due timer to the next run; none while the interval is 0", () => {
    const [s1] = running()
    const [s2, a2] = transition(agentMachine, s1, skipped(1500))
    expect(raised(a2)).toEqual([{ event: { type: AGENT_DUE }, id: AGENT_DUE, delay: 1500 }])
    expect(s2.context).toMatchObject({ runIntervalSeconds: 2, dueAt: '2026-11-26T10:00:02.000Z' })
    const [s3, a3] = transition(agentMachine, s2, { type: 'agent.run.started', effectId: 'fx', runId: 'r', runIntervalSeconds: 2, nextRunInMs: 2000, dueAt: '2026-11-26T10:00:04.000Z' })
    expect(raised(a3)).toMatchObject([{ id: AGENT_DUE, delay: 2000 }])
    const [s4, a4] = transition(agentMachine, s3, skipped(null, { reason: 'off', runIntervalSeconds: 0 }))
    expect(raised(a4)).toEqual([])
    expect(cancelled(a4)).toEqual([AGENT_DUE])
    expect(s4.context).toMatchObject({ runIntervalSeconds: 0, dueAt: null })
  })

  it('an agent with no run interval (as created, or as its last check saw it) starts without a check; a change while stopped makes the next start check', () => {
    const [s0] = initialTransition(agentMachine, { ...input, runIntervalSeconds: 0 })
    const [s1, a1] = transition(agentMachine, s0, { type: 'agent.start' })
    expect(s1.value).toBe('running')
    expect(a1).toEqual([])
    // Checked once (interval 2), then the check saw 0: a restart checks nothing.
    const [r1] = running()
    const [r2] = transition(agentMachine, r1, skipped(null, { runIntervalSeconds: 0 }))
    const [r3] = transition(agentMachine, r2, { type: 'agent.stop' })
    expect(types(transition(agentMachine, r3, { type: 'agent.start' })[1])).not.toContain(AGENT_RUN_DUE)
    // The interval changed while stopped: unknown until checked, so the next start checks.
    const [r4] = transition(agentMachine, r3, { type: 'agent.schedule.changed' })
    expect(r4.context.runIntervalSeconds).toBeNull()
    expect(types(transition(agentMachine, r4, { type: 'agent.start' })[1])).toContain(AGENT_RUN_DUE)
    // One created with an interval checks at its first start.
    const [c0] = initialTransition(agentMachine, { ...input, runIntervalSeconds: 60 })
    expect(types(transition(agentMachine, c0, { type: 'agent.start' })[1])).toContain(AGENT_RUN_DUE)
  })

  it('an automation waiting for the agent to run is told at its next start, once; at once when it runs already; a new agent tells nobody', () => {
    const tells = (actions: Action[]) => actions.filter((a) => a.type === AGENT_AUTOMATIONS).map((a) => a.params)
    const [s0] = initialTransition(agentMachine, { ...input, runIntervalSeconds: 0 })
    expect(tells(transition(agentMachine, s0, { type: 'agent.start' })[1])).toEqual([])
    const [s1] = transition(agentMachine, s0, { type: AUTOMATIONS_WAITING })
    expect(s1.context.automationsWaiting).toBe(true)
    const [s2, a2] = transition(agentMachine, s1, { type: 'agent.start' })
    expect(tells(a2)).toEqual([{ signal: 'agentStarted' }])
    const [s3] = transition(agentMachine, s2, { type: 'agent.stop' })
    expect(tells(transition(agentMachine, s3, { type: 'agent.start' })[1])).toEqual([])
    // Running already (the firing saw it stopped just before a start): told now, in a transition the runtime commits.
    const [s4, a4] = transition(agentMachine, s2, { type: AUTOMATIONS_WAITING })
    expect(s4.value).toBe('running')
    expect(tells(a4)).toEqual([{ signal: 'agentStarted' }])
    // An agent stored before the flag was kept: it may have automations waiting, so a start tells them.
    const { automationsWaiting: _w, ...older } = s0.context
    const stored = agentMachine.resolveState({ ...agentMachine.getPersistedSnapshot(s0), context: older } as never)
    expect(tells(transition(agentMachine, stored, { type: 'agent.start' })[1])).toEqual([{ signal: 'agentStarted' }])
  })

  it('the timer firing checks again; stop, pause and delete cancel it', () => {
    const [s1] = running()
    const [s2] = transition(agentMachine, s1, skipped(1500))
    const [s3, a3] = transition(agentMachine, s2, { type: AGENT_DUE })
    expect(s3.value).toBe('running')
    // Accepted (a new snapshot: the runtime commits and journals it), one check asked for.
    expect(s3).not.toBe(s2)
    expect(s3.context.checks).toBe(s2.context.checks + 1)
    expect(types(a3)).toEqual([AGENT_RUN_DUE])
    for (const event of [{ type: 'agent.stop' }, { type: 'agent.pause', reason: 'r' }, { type: 'agent.delete' }] as const) {
      const [, actions] = transition(agentMachine, s2, event)
      expect(cancelled(actions)).toEqual([AGENT_DUE])
    }
  })

  it("a change of the run interval checks at once; a run's end checks only once the next run was due", () => {
    const [s1] = running()
    const [s2] = transition(agentMachine, s1, skipped(1500))
    expect(types(transition(agentMachine, s2, { type: 'agent.schedule.changed' })[1])).toEqual([AGENT_RUN_DUE])
    const end = (at: string) => ({ type: 'child.done', childId: 'r', key: 'r', status: 'completed', output: null, at }) as const
    // Ended before the due time: nothing to do (the timer is still armed).
    const [early] = transition(agentMachine, s2, end('2026-11-26T10:00:01.000Z'))
    expect(early).toBe(s2)
    // A check met the run in progress: it armed a fallback an interval away, and the run's end checks now.
    const [s3, a3] = transition(agentMachine, s2, skipped(2000, { reason: 'run_in_progress', dueAt: '2026-11-26T10:00:02.000Z' }))
    expect(raised(a3)).toMatchObject([{ id: AGENT_DUE, delay: 2000 }])
    const [s4, a4] = transition(agentMachine, s3, { ...end('2026-11-26T10:00:02.500Z'), type: 'child.failed' })
    expect(types(a4)).toEqual([AGENT_RUN_DUE])
    expect(s4.context.dueAt).toBeNull()
  })

  it("only the latest check's outcome re-arms the timer: an earlier one, overtaken by an interval change, is refused", () => {
    const [s1, a1] = running()
    expect(a1.find((a) => a.type === AGENT_RUN_DUE)?.params).toEqual({ check: s1.context.checks })
    const [s2, a2] = transition(agentMachine, s1, { type: 'agent.schedule.changed' })
    expect(a2.find((a) => a.type === AGENT_RUN_DUE)?.params).toEqual({ check: s1.context.checks + 1 })
    // The start's check (it read the old interval) answers after the change's check was asked for.
    const [stale] = transition(agentMachine, s2, skipped(55_000, { check: s1.context.checks }))
    expect(stale).toBe(s2)
    const [s3, a3] = transition(agentMachine, s2, skipped(1500, { check: s2.context.checks }))
    expect(s3).not.toBe(s2)
    expect(raised(a3)).toMatchObject([{ id: AGENT_DUE, delay: 1500 }])
  })

  it('a check that failed for good is tried again later: a running agent never loses its timer', () => {
    const [s1] = running()
    const [, a2] = transition(agentMachine, s1, { type: `${AGENT_RUN_DUE}.failed`, effectId: 'fx', error: 'boom' })
    expect(raised(a2)).toMatchObject([{ id: AGENT_DUE, delay: CHECK_RETRY_MS }])
  })

  it('an interval is honoured to the millisecond on a simulated clock, not rounded to a tick', () => {
    const clock = new SimulatedClock()
    let checks = 0
    const machine = agentMachine.provide({ actions: { [AGENT_RUN_DUE]: () => void checks++ } })
    const actor = createActor(machine, { input, clock }).start()
    actor.send({ type: 'agent.start' })
    expect(checks).toBe(1)
    actor.send(skipped(2000))
    clock.increment(1999)
    expect(checks).toBe(1)
    clock.increment(1)
    expect(checks).toBe(2)
    actor.send(skipped(2000))
    clock.increment(2000)
    expect(checks).toBe(3)
    actor.send(skipped(2000))
    actor.send({ type: 'agent.stop' })
    clock.increment(10_000)
    expect(checks).toBe(3)
    actor.stop()
  })

  it('pause keeps a reason, start clears it', () => {
    const [s1] = running()
    const [s2] = transition(agentMachine, s1, { type: 'agent.pause', reason: 'out of funds' })
    expect(s2.value).toBe('paused')
    expect(s2.context.reason).toBe('out of funds')
    const [s3] = transition(agentMachine, s2, { type: 'agent.start' })
    expect(s3.context.reason).toBeNull()
  })

  it('deleted is final and accepts nothing', () => {
    const [s0] = initialTransition(agentMachine, input)
    const [s1] = transition(agentMachine, s0, { type: 'agent.delete' })
    expect(s1.value).toBe('deleted')
    expect(s1.status).toBe('done')
    const [s2] = transition(agentMachine, s1, { type: 'agent.start' })
    expect(s2).toBe(s1)
  })

  it('an event the state does not accept leaves the snapshot unchanged', () => {
    const [s0] = initialTransition(agentMachine, input)
    expect(transition(agentMachine, s0, { type: 'agent.stop' })[0]).toBe(s0)
    expect(transition(agentMachine, s0, { type: AGENT_DUE })[0]).toBe(s0)
  })

  it('survives a persist/restore round trip through JSON in every state', () => {
    const [s0] = initialTransition(agentMachine, input)
    const [run] = transition(agentMachine, s0, { type: 'agent.start' })
    const [armed] = transition(agentMachine, run, skipped(1500))
    const [paused] = transition(agentMachine, armed, { type: 'agent.pause', reason: 'r' })
    for (const s of [s0, run, armed, paused]) {
      const restored = roundTrip(s)
      expect(restored.value).toEqual(s.value)
      expect(restored.context).toEqual(s.context)
    }
    const [next] = transition(agentMachine, roundTrip(armed), { type: 'agent.stop' })
    expect(next.value).toBe('stopped')
  })

  it('a version 1 running agent migrates: its old tick is heard once as a check, and is dropped when the due timer is set or cancelled', () => {
    const v1 = { status: 'active', value: 'running', historyValue: {}, children: {}, context: { agentId: 'a1', accountId: 'acc', tickMs: 60_000, ticks: 7, reason: null, runIntervalSeconds: 60 } }
    const migrated = migrateAgentSnapshot(v1, 1) as typeof v1
    expect(migrated.context).toEqual({ agentId: 'a1', accountId: 'acc', reason: null, checks: 0, runIntervalSeconds: 60, dueAt: null })
    const s = agentMachine.resolveState(migrated as never)
    // The machine names no xstate timer: the runtime hands it the old tick as AGENT_DUE, one check.
    expect(agentKind.renamedTimers).toEqual({ [LEGACY_TICK]: AGENT_DUE })
    expect(() => agentKind.parseEvent({ type: LEGACY_TICK })).toThrow()
    const [, a1] = transition(agentMachine, s, { type: AGENT_DUE })
    expect(types(a1)).toEqual([AGENT_RUN_DUE])
    const live = { [LEGACY_TICK]: 999_000 }
    // Or a check's outcome comes first: the old tick goes with the re-arm.
    const [, b1] = transition(agentMachine, s, skipped(1500))
    const rearmed = planActions(agentKind, 'a1', 2, b1, live)
    expect([Object.keys(rearmed.timers), rearmed.timerDeletes]).toEqual([[AGENT_DUE], [LEGACY_TICK]])
    // Or it is stopped: both timers go.
    const stopped = planActions(agentKind, 'a1', 2, transition(agentMachine, s, { type: 'agent.stop' })[1], live)
    expect([stopped.timers, stopped.timerDeletes.sort()]).toEqual([{}, [AGENT_DUE, LEGACY_TICK].sort()])
    expect(() => migrateAgentSnapshot(v1, 7)).toThrow()
  })

  it('rejects malformed events before the machine sees them', () => {
    expect(() => agentKind.parseEvent({ type: 'agent.pause' })).toThrow()
    expect(() => agentKind.parseEvent({ type: 'agent.explode' })).toThrow()
    expect(agentKind.parseEvent({ type: 'agent.start' })).toEqual({ type: 'agent.start' })
    expect(agentKind.machineVersion).toBe(2)
  })

  it('a sale (market.sold) leaves the agent stopped under the buyer, with no schedule, no reason and nothing waiting, from any live state; a deleted agent takes none', () => {
    const sold = { type: MARKET_SOLD, listingId: 'l1', accountId: 'buyer' } as const
    const listed = transition(agentMachine, running()[0], { type: 'agent.pause', reason: 'listed' })[0]
    for (const from of [initialTransition(agentMachine, input)[0], running()[0], listed]) {
      const [s1, acts] = transition(agentMachine, from, sold)
      expect(s1.value).toBe('stopped')
      expect(s1.context).toMatchObject({ accountId: 'buyer', reason: null, runIntervalSeconds: 0, automationsWaiting: false })
      expect(cancelled(acts as Action[])).toContain(AGENT_DUE)
      expect(roundTrip(s1).context).toEqual(s1.context)
    }
    const deleted = transition(agentMachine, initialTransition(agentMachine, input)[0], { type: 'agent.delete' })[0]
    expect(transition(agentMachine, deleted, sold)[0].context.accountId).toBe('acc')
    expect(() => agentKind.parseEvent({ type: MARKET_SOLD, listingId: 'l1' })).toThrow()
  })
})
