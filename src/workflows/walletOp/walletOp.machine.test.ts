import { describe, expect, it } from 'vitest'
import { initialTransition, transition, type AnyMachineSnapshot } from 'xstate'
import { walletOpKind, walletOpMachine, type WalletOpInput } from './walletOp.machine.ts'

const input: WalletOpInput = { opId: 'op1', accountId: 'acc', agentId: 'ag', kind: 'transfer', params: { to: '0xabc', amount: '5' } }

function roundTrip(snapshot: AnyMachineSnapshot): AnyMachineSnapshot {
  const json = JSON.parse(JSON.stringify(walletOpMachine.getPersistedSnapshot(snapshot)))
  return walletOpMachine.resolveState(json)
}

// The machine has no delayed transitions: the pure API drives it, with no clock at all.
describe('wallet operation machine', () => {
  it('starts submitting and asks for the submit effect with the operation id', () => {
    const [s, actions] = initialTransition(walletOpMachine, input)
    expect(s.value).toBe('submitting')
    expect(actions.map((a) => ({ type: a.type, params: a.params }))).toEqual([{ type: 'op.submit', params: { opId: 'op1' } }])
    expect(s.context).toMatchObject({ ...input, txHash: null, result: null, error: null })
  })

  it('submitted -> confirming (confirm effect with the hash) -> confirmed with the result', () => {
    const [s0] = initialTransition(walletOpMachine, input)
    const [s1, a1] = transition(walletOpMachine, s0, { type: 'op.submitted', effectId: 'e1', txHash: '0xfeed' })
    expect(s1.value).toBe('confirming')
    expect(a1.find((a) => a.type === 'op.confirm')?.params).toEqual({ opId: 'op1', txHash: '0xfeed' })
    const [s2, a2] = transition(walletOpMachine, s1, { type: 'op.confirmed', effectId: 'e2', result: { gasUsed: '21000' } })
    expect(s2.value).toBe('confirmed')
    expect(s2.status).toBe('done')
    expect(s2.context).toMatchObject({ txHash: '0xfeed', result: { gasUsed: '21000' }, error: null })
    expect(a2.filter((a) => walletOpKind.effects.includes(a.type))).toEqual([])
  })

  it('each failure path ends failed with its code', () => {
    const [s0] = initialTransition(walletOpMachine, input)
    const rejected = transition(walletOpMachine, s0, { type: 'op.rejected', effectId: 'e', error: { code: 'insufficient_funds', message: 'no' } })[0]
    expect([rejected.value, rejected.context.error]).toEqual(['failed', { code: 'insufficient_funds', message: 'no' }])
    const submitFailed = transition(walletOpMachine, s0, { type: 'op.submit.failed', effectId: 'e', error: 'rpc down' })[0]
    expect(submitFailed.context.error).toEqual({ code: 'submit_failed', message: 'rpc down' })
    const [confirming] = transition(walletOpMachine, s0, { type: 'op.submitted', effectId: 'e', txHash: '0x1' })
    const confirmFailed = transition(walletOpMachine, confirming, { type: 'op.confirm.failed', effectId: 'e', error: 'gone' })[0]
    expect([confirmFailed.value, confirmFailed.context.error]).toEqual(['failed', { code: 'confirmation_failed', message: 'gone' }])
    const reverted = transition(walletOpMachine, confirming, { type: 'op.rejected', effectId: 'e', error: { code: 'transaction_reverted', message: 'r' } })[0]
    expect(reverted.value).toBe('failed')
  })

  it('final states accept nothing; an event out of turn leaves the snapshot unchanged', () => {
    const [s0] = initialTransition(walletOpMachine, input)
    expect(transition(walletOpMachine, s0, { type: 'op.confirmed', effectId: 'e', result: {} })[0]).toBe(s0)
    const [failed] = transition(walletOpMachine, s0, { type: 'op.submit.failed', effectId: 'e', error: 'x' })
    expect(transition(walletOpMachine, failed, { type: 'op.submitted', effectId: 'e', txHash: '0x2' })[0]).toBe(failed)
  })

  it('survives a persist/restore round trip through JSON in every state, and carries on from it', () => {
    const [s0] = initialTransition(walletOpMachine, input)
    const [confirming] = transition(walletOpMachine, s0, { type: 'op.submitted', effectId: 'e1', txHash: '0xfeed' })
    const [confirmed] = transition(walletOpMachine, confirming, { type: 'op.confirmed', effectId: 'e2', result: { amountOutBaseUnits: '7' } })
    const [failed] = transition(walletOpMachine, s0, { type: 'op.rejected', effectId: 'e', error: { code: 'c', message: 'm' } })
    for (const s of [s0, confirming, confirmed, failed]) {
      const restored = roundTrip(s)
      expect(restored.value).toEqual(s.value)
      expect(restored.context).toEqual(s.context)
      expect(restored.status).toEqual(s.status)
    }
    const [next, actions] = transition(walletOpMachine, roundTrip(confirming), { type: 'op.confirmed', effectId: 'e2', result: { x: 1 } })
    expect(next.value).toBe('confirmed')
    expect(next.context.txHash).toBe('0xfeed')
    expect(actions.filter((a) => a.type === 'op.confirm')).toEqual([])
  })

  it('rejects malformed events before the machine sees them', () => {
    expect(() => walletOpKind.parseEvent({ type: 'op.submitted', effectId: 'e' })).toThrow()
    expect(() => walletOpKind.parseEvent({ type: 'op.teleport' })).toThrow()
    expect(walletOpKind.parseEvent({ type: 'op.submitted', effectId: 'e', txHash: '0x1' })).toEqual({ type: 'op.submitted', effectId: 'e', txHash: '0x1' })
  })
})
