import { describe, expect, it } from 'vitest'
import { createActor, initialTransition, SimulatedClock, transition, type AnyMachineSnapshot } from 'xstate'
import { agentKind, agentMachine } from './agent.machine.ts'

const input = { agentId: 'a1', accountId: 'acc', tickMs: 1000 }

function roundTrip(snapshot: AnyMachineSnapshot): AnyMachineSnapshot {
  const json = JSON.parse(JSON.stringify(agentMachine.getPersistedSnapshot(snapshot)))
  return agentMachine.resolveState(json)
}

describe('agent machine', () => {
  it('starts stopped with no actions', () => {
    const [s, actions] = initialTransition(agentMachine, input)
    expect(s.value).toBe('stopped')
    expect(actions).toEqual([])
    expect(s.context).toMatchObject({ agentId: 'a1', ticks: 0, reason: null })
  })

  it('start schedules a durable tick; stop cancels it', () => {
    const [s0] = initialTransition(agentMachine, input)
    const [s1, a1] = transition(agentMachine, s0, { type: 'agent.start' })
    expect(s1.value).toBe('running')
    const raise = a1.find((a) => a.type === 'xstate.raise')
    expect(raise?.params).toMatchObject({ delay: 1000, id: 'xstate.after.tick.agent.running' })
    const [s2, a2] = transition(agentMachine, s1, { type: 'agent.stop' })
    expect(s2.value).toBe('stopped')
    expect(a2.map((a) => a.type)).toContain('xstate.cancel')
  })

  it('a tick counts and re-arms the timer', () => {
    const [s0] = initialTransition(agentMachine, input)
    const [s1] = transition(agentMachine, s0, { type: 'agent.start' })
    const [s2, a2] = transition(agentMachine, s1, { type: 'xstate.after.tick.agent.running' })
    expect(s2.value).toBe('running')
    expect(s2.context.ticks).toBe(1)
    expect(a2.some((a) => a.type === 'xstate.raise')).toBe(true)
  })

  it('the tick fires every tickMs on a simulated clock, not on wall time', () => {
    const clock = new SimulatedClock()
    const actor = createActor(agentMachine, { input, clock }).start()
    actor.send({ type: 'agent.start' })
    clock.increment(999)
    expect(actor.getSnapshot().context.ticks).toBe(0)
    clock.increment(1)
    expect(actor.getSnapshot().context.ticks).toBe(1)
    for (let i = 0; i < 3; i++) clock.increment(1000)
    expect(actor.getSnapshot().context.ticks).toBe(4)
    actor.send({ type: 'agent.stop' })
    clock.increment(10_000)
    expect(actor.getSnapshot().context.ticks).toBe(4)
    actor.stop()
  })

  it('pause keeps a reason, start clears it', () => {
    const [s0] = initialTransition(agentMachine, input)
    const [s1] = transition(agentMachine, s0, { type: 'agent.start' })
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
    const [s1] = transition(agentMachine, s0, { type: 'agent.stop' })
    expect(s1).toBe(s0)
  })

  it('survives a persist/restore round trip through JSON in every state', () => {
    const [s0] = initialTransition(agentMachine, input)
    const [running] = transition(agentMachine, s0, { type: 'agent.start' })
    const [ticked] = transition(agentMachine, running, { type: 'xstate.after.tick.agent.running' })
    const [paused] = transition(agentMachine, ticked, { type: 'agent.pause', reason: 'r' })
    for (const s of [s0, running, ticked, paused]) {
      const restored = roundTrip(s)
      expect(restored.value).toEqual(s.value)
      expect(restored.context).toEqual(s.context)
    }
    const restored = roundTrip(ticked)
    const [next] = transition(agentMachine, restored, { type: 'agent.stop' })
    expect(next.value).toBe('stopped')
    expect(next.context.ticks).toBe(1)
  })

  it('rejects malformed events before the machine sees them', () => {
    expect(() => agentKind.parseEvent({ type: 'agent.pause' })).toThrow()
    expect(() => agentKind.parseEvent({ type: 'agent.explode' })).toThrow()
    expect(agentKind.parseEvent({ type: 'agent.start' })).toEqual({ type: 'agent.start' })
  })
})
