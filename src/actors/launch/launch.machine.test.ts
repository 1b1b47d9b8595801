import { describe, expect, it } from 'vitest'
import { initialTransition, transition, type AnyMachineSnapshot } from 'xstate'
import { launchKind, launchMachine, type LaunchEvent } from './launch.machine.ts'
import type { LaunchInput } from '../../domain/launches/launch.schema.ts'
import { launchProgress } from '../../domain/launches/launchRules.ts'

const input: LaunchInput = {
  launchId: 'l1', accountId: 'acc', agentId: 'ag', venue: 'venue-a', symbol: 'TST', name: 'Test',
  description: null, logoUrl: null, quote: 'ETH', seedAmount: null,
}

function roundTrip(snapshot: AnyMachineSnapshot): AnyMachineSnapshot {
  const json = JSON.parse(JSON.stringify(launchMachine.getPersistedSnapshot(snapshot)))
  return launchMachine.resolveState(json)
}

const step = (s: AnyMachineSnapshot, e: LaunchEvent) => transition(launchMachine, s, e)
const confirmedEvent: LaunchEvent = { type: 'launch.confirmed', effectId: 'e3', tokenAddress: '0xtoken', poolAddress: null, blockNumber: '12' }

// The machine has no delayed transitions: the pure API drives it, with no clock at all.
describe('launch machine', () => {
  it('walks pending -> simulating -> submitting -> confirming -> live, one effect per step', () => {
    const [s0, a0] = initialTransition(launchMachine, input)
    expect(s0.value).toBe('pending')
    expect(a0).toEqual([])
    const [s1, a1] = step(s0, { type: 'launch.begin' })
    expect([s1.value, a1.map((a) => [a.type, a.params])]).toEqual(['simulating', [['launch.simulate', { launchId: 'l1' }]]])
    const [s2, a2] = step(s1, { type: 'launch.simulated', effectId: 'e1', gas: '900000' })
    expect([s2.value, s2.context.gas, a2.map((a) => a.type)]).toEqual(['submitting', '900000', ['launch.submit']])
    const [s3, a3] = step(s2, { type: 'launch.submitted', effectId: 'e2', txHash: '0xabc' })
    expect([s3.value, a3.map((a) => [a.type, a.params])]).toEqual(['confirming', [['launch.confirm', { launchId: 'l1', txHash: '0xabc' }]]])
    const [s4] = step(s3, confirmedEvent)
    expect(s4.value).toBe('live')
    expect(s4.status).toBe('done')
    expect(s4.context).toMatchObject({ tokenAddress: '0xtoken', poolAddress: null, blockNumber: '12', error: null })
    expect(launchProgress('live', s4.context)).toEqual({ step: 'live', percent: 100 })
  })

  it('fails at each step with its code, keeping the progress it reached', () => {
    const [s0] = initialTransition(launchMachine, input)
    const [sim] = step(s0, { type: 'launch.begin' })
    const [f1] = step(sim, { type: 'launch.simulate.failed', effectId: 'e', error: 'revert' })
    expect([f1.value, f1.context.error]).toEqual(['failed', { code: 'simulation_failed', message: 'revert' }])
    expect(launchProgress('failed', f1.context)).toEqual({ step: 'failed', percent: 15 })
    const [sub] = step(sim, { type: 'launch.simulated', effectId: 'e', gas: '1' })
    const [f2] = step(sub, { type: 'launch.submit.failed', effectId: 'e', error: 'nonce' })
    expect(f2.context.error).toEqual({ code: 'submit_failed', message: 'nonce' })
    expect(launchProgress('failed', f2.context).percent).toBe(40)
    const [conf] = step(sub, { type: 'launch.submitted', effectId: 'e', txHash: '0x1' })
    const [f3] = step(conf, { type: 'launch.rejected', effectId: 'e', error: { code: 'transaction_reverted', message: 'r' } })
    expect([f3.value, f3.context.error?.code]).toEqual(['failed', 'transaction_reverted'])
    expect(launchProgress('failed', f3.context).percent).toBe(70)
  })

  it('events out of turn leave the snapshot unchanged; final states accept nothing', () => {
    const [s0] = initialTransition(launchMachine, input)
    expect(step(s0, confirmedEvent)[0]).toBe(s0)
    const [sim] = step(s0, { type: 'launch.begin' })
    expect(step(sim, { type: 'launch.begin' })[0]).toBe(sim)
    const [failed] = step(sim, { type: 'launch.simulate.failed', effectId: 'e', error: 'x' })
    expect(step(failed, { type: 'launch.simulated', effectId: 'e', gas: '1' })[0]).toBe(failed)
  })

  it('survives a persist/restore round trip through JSON in every state, and carries on from it', () => {
    const states: AnyMachineSnapshot[] = [initialTransition(launchMachine, input)[0]]
    const events: LaunchEvent[] = [
      { type: 'launch.begin' },
      { type: 'launch.simulated', effectId: 'e1', gas: '5' },
      { type: 'launch.submitted', effectId: 'e2', txHash: '0xabc' },
      confirmedEvent,
    ]
    for (const e of events) states.push(step(states.at(-1)!, e)[0])
    for (const s of states) {
      const restored = roundTrip(s)
      expect(restored.value).toEqual(s.value)
      expect(restored.context).toEqual(s.context)
      expect(restored.status).toEqual(s.status)
    }
    // Restored mid-flight (confirming), it finishes as if it had never been persisted.
    const [live] = step(roundTrip(states[3]!), confirmedEvent)
    expect(live.value).toBe('live')
    expect(live.context.txHash).toBe('0xabc')
  })

  it('rejects malformed events before the machine sees them', () => {
    expect(() => launchKind.parseEvent({ type: 'launch.submitted', effectId: 'e' })).toThrow()
    expect(() => launchKind.parseEvent({ type: 'launch.explode' })).toThrow()
    expect(launchKind.parseEvent({ type: 'launch.begin' })).toEqual({ type: 'launch.begin' })
  })
})
