import { describe, expect, it } from 'vitest'
import { initialTransition, transition, type AnyMachineSnapshot } from 'xstate'
import { walletOpKind, walletOpMachine, type WalletOpInput } from './walletOp.machine.ts'

const input: WalletOpInput = { opId: 'op1', accountId: 'acc', agentId: 'ag', kind: 'transfer', params: { to: '0xabc', amount: '5' } }

function roundTrip(snapshot: AnyMachineSnapshot): AnyMachineSnapshot {
  const json = JSON.parse(JSON.stringify(walletOpMachine.getPersistedSnapshot(snapshot)))
  return walletOpMachine.resolveState(json)
}

// The pure API drives the machine with no clock: time comes in the events' `at`, and the approval's expiry is a raise with a delay (a durable timer).
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

  describe('awaiting approval', () => {
    const approval = { id: 'op1', usdValue: '2000.00', thresholdUsd: '1000', requestedAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T00:15:00.000Z' }
    const waiting = () => initialTransition(walletOpMachine, { ...input, kind: 'swap', params: { deadline: '1' }, approval })

    it('waits with nothing submitted and a durable expiry timer of the ttl', () => {
      const [s, actions] = waiting()
      expect(s.value).toBe('awaiting_approval')
      expect(s.context.approval).toEqual({ ...approval, status: 'pending', reason: null, decidedBy: null, decidedAt: null })
      expect(actions.map((a) => a.type)).not.toContain('op.submit')
      const raise = actions.find((a) => a.type === 'xstate.raise') as { params: { delay: number; id: string } } | undefined
      expect(raise?.params).toMatchObject({ delay: 900_000, id: 'approval.expire' })
    })

    it('approved: submitted with the re-checked params, the decision kept; the timer cancelled', () => {
      const [s0] = waiting()
      const [s1, a1] = transition(walletOpMachine, s0, { type: 'approval.approve', by: 'key:k1', reason: 'ok', at: '2026-01-01T00:01:00.000Z', params: { deadline: '99' } })
      expect(s1.value).toBe('submitting')
      expect(s1.context.params).toEqual({ deadline: '99' })
      expect(s1.context.approval).toMatchObject({ status: 'approved', decidedBy: 'key:k1', decidedAt: '2026-01-01T00:01:00.000Z', reason: 'ok' })
      expect(a1.map((a) => a.type)).toEqual(expect.arrayContaining(['xstate.cancel', 'op.submit']))
    })

    it('approved with a failed re-check, rejected, or expired: failed with its code, nothing submitted', () => {
      const [s0] = waiting()
      const moved = transition(walletOpMachine, s0, { type: 'approval.approve', by: 'key:k1', failure: { code: 'price_moved', message: 'm' } })
      expect([moved[0].value, moved[0].context.error?.code, moved[0].context.approval?.status]).toEqual(['failed', 'price_moved', 'approved'])
      const rejected = transition(walletOpMachine, s0, { type: 'approval.reject', by: 'key:k1', reason: 'too big' })
      expect([rejected[0].value, rejected[0].context.error?.code, rejected[0].context.approval?.reason]).toEqual(['failed', 'approval_rejected', 'too big'])
      const expired = transition(walletOpMachine, s0, { type: 'approval.expire', at: '2026-01-01T00:15:00.000Z' })
      expect([expired[0].value, expired[0].context.error?.code, expired[0].context.approval]).toEqual([
        'failed', 'approval_expired', expect.objectContaining({ status: 'rejected', reason: 'expired', decidedBy: null, decidedAt: '2026-01-01T00:15:00.000Z' }),
      ])
      for (const [s, a] of [moved, rejected, expired]) expect(a.map((x) => x.type)).not.toContain('op.submit')
      expect(roundTrip(s0).context).toEqual(s0.context)
    })

    it('an approval event stamps its time; a version 1 snapshot gains `approval: null`', () => {
      expect(walletOpKind.parseEvent({ type: 'approval.reject', by: 'x' })).toMatchObject({ at: expect.any(String) })
      expect(walletOpKind.migrate!({ value: 'submitting', context: { opId: 'o' } }, 1)).toEqual({ value: 'submitting', context: { opId: 'o', approval: null } })
    })
  })
})
