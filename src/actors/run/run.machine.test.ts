import { describe, expect, it } from 'vitest'
import { createActor, initialTransition, SimulatedClock, transition, type AnyMachineSnapshot, type EventFrom } from 'xstate'
import type { RunInput } from '../../domain/runs/ports.ts'
import { planActions } from '../runtime/index.ts'
import { RUN_DEADLINE, RUN_FINAL, RUN_MODEL_CALL, RUN_TOOL_CALL, RUN_TOOL_RESULT, runKind, runMachine } from './run.machine.ts'

const input: RunInput = {
  runId: 'r1', accountId: 'acc', agentId: 'g1', model: 'gpt-4o-mini', temperature: null, goal: 'grow the treasury',
  tools: ['swap_execute'], system: 'You are g1.', trigger: 'api', maxSteps: 3, maxCredits: 100, maxSeconds: 60,
}
const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 }
const DEADLINE = RUN_DEADLINE
/** The name the deadline timer had while it was an xstate `after`; stored runs may still hold it. */
const LEGACY_DEADLINE = 'xstate.after.deadline.run.running'
type Act = { type: string; params?: unknown }
type RunEvent = EventFrom<typeof runMachine>

const start = (over: Partial<RunInput> = {}) => initialTransition(runMachine, { ...input, ...over }) as [AnyMachineSnapshot, Act[]]
const step = (s: AnyMachineSnapshot, e: RunEvent) => transition(runMachine, s, e) as [AnyMachineSnapshot, Act[]]
const answer = (content: string, toolCalls: Array<{ id: string; name: string; arguments: string }> = [], credits = 4): RunEvent =>
  ({ type: 'model.done', effectId: 'e', content, toolCalls, model: 'gpt-4o-mini', usage, credits, at: '2026-11-24T10:00:00.000Z' })
const statusOf = (s: AnyMachineSnapshot) => runKind.statusOf(s)

function roundTrip(snapshot: AnyMachineSnapshot): AnyMachineSnapshot {
  return runMachine.resolveState(JSON.parse(JSON.stringify(runMachine.getPersistedSnapshot(snapshot))))
}

describe('the run machine', () => {
  it('starts its first step at once: queued passes straight to thinking, with the model call and the deadline timer', () => {
    const [s0, a0] = start()
    expect(s0.value).toEqual({ running: 'thinking' })
    expect(statusOf(s0)).toBe('running')
    expect(a0.map((a) => a.type)).toEqual(['xstate.raise', RUN_MODEL_CALL])
    expect(a0[0]!.params).toMatchObject({ delay: 60_000, id: DEADLINE })
    expect(a0[1]!.params).toEqual({ step: 1 })
    expect(s0.context).toMatchObject({ stepsUsed: 1, credits: 0, pending: [], stop: null, timeUp: false, exhausted: null, summary: null, error: null })
    expect(s0.context.steps).toEqual([{ step: 1, content: null, model: null, credits: 0, usage: null, toolCalls: [], acted: false, answeredAt: null }])
    expect(s0.context.transcript).toEqual([{ role: 'user', content: 'grow the treasury' }])
  })

  it('completes when the model answers without tool calls: the answer is the summary, the deadline is cancelled', () => {
    const [s1, a1] = step(start()[0], answer('All set.'))
    expect(s1.value).toBe('completed')
    expect(s1.status).toBe('done')
    expect(a1.map((a) => a.type)).toEqual(['xstate.cancel'])
    expect(s1.context).toMatchObject({ summary: 'All set.', credits: 4, stepsUsed: 1, exhausted: null, error: null })
    expect(s1.context.steps).toEqual([
      { step: 1, content: 'All set.', model: 'gpt-4o-mini', credits: 4, usage, toolCalls: [], acted: false, answeredAt: '2026-11-24T10:00:00.000Z' },
    ])
    expect(s1.context.transcript).toEqual([{ role: 'user', content: 'grow the treasury' }, { role: 'assistant', content: 'All set.', toolCalls: [] }])
  })

  it('fails with the provider error, or with model_call_failed when the runtime gave up on the model call', () => {
    const error = { code: 'model_provider_error', message: 'upstream 500', status: 502 }
    const [failed] = step(start()[0], { type: 'model.failed', effectId: 'e', error })
    expect([failed.value, failed.context.error]).toEqual(['failed', error])
    const [gaveUp] = step(start()[0], { type: `${RUN_MODEL_CALL}.failed` as const, effectId: 'e', error: 'timeout' })
    expect([gaveUp.value, gaveUp.context.error]).toEqual(['failed', { code: 'model_call_failed', message: 'timeout', status: 502 }])
  })

  it('checks the budgets before the first step: no credits or no steps left ends it before any model call', () => {
    const [noCredits, a1] = start({ maxCredits: 0 })
    expect([noCredits.value, noCredits.context.exhausted, noCredits.context.stepsUsed]).toEqual(['budget_exhausted', 'maxCredits', 0])
    expect(a1.map((a) => a.type)).not.toContain(RUN_MODEL_CALL)
    const [noSteps] = start({ maxSteps: 0, maxCredits: 0 })
    // Steps are checked before credits.
    expect([noSteps.value, noSteps.context.exhausted]).toEqual(['budget_exhausted', 'maxSteps'])
  })

  it('run.stop while the model call is in flight: the answer is recorded but not acted on, and the run ends stopped', () => {
    const [s0] = start()
    const [s1, a1] = step(s0, { type: 'run.stop' })
    expect(s1.value).toEqual({ running: 'thinking' })
    expect(a1).toEqual([])
    expect(s1.context.stop).toEqual({ inFlight: { modelCall: true, toolCalls: [] } })
    // A second stop changes nothing.
    expect(step(s1, { type: 'run.stop' })[0]).toBe(s1)
    const [s2] = step(s1, answer('I would swap.', [{ id: 'c1', name: 'swap_execute', arguments: '{}' }]))
    expect(s2.value).toBe('stopped')
    expect(s2.context).toMatchObject({ summary: null, credits: 4, pending: [] })
    expect(s2.context.steps[0]).toMatchObject({ content: 'I would swap.', acted: false, toolCalls: [{ id: 'c1', status: 'skipped', result: null, doneAt: null }] })
  })

  it('a model failure after a stop still ends failed (the error is kept)', () => {
    const [s1] = step(start()[0], { type: 'run.stop' })
    const [s2] = step(s1, { type: 'model.failed', effectId: 'e', error: { code: 'model_provider_error', message: 'x', status: 502 } })
    expect(s2.value).toBe('failed')
    expect(s2.context.stop).not.toBeNull()
  })

  it('the deadline only marks the time as up: a model call in flight may still complete the run', () => {
    const [s1, a1] = step(start()[0], { type: DEADLINE })
    expect(s1.value).toEqual({ running: 'thinking' })
    expect(a1).toEqual([])
    expect(s1.context.timeUp).toBe(true)
    const [s2] = step(s1, answer('Done in time.'))
    expect([s2.value, s2.context.exhausted]).toEqual(['completed', null])
  })

  it('names its deadline timer itself (no xstate internal name); a stored run\'s timer under the old name is heard as it, and goes when leaving running', () => {
    expect(DEADLINE).not.toMatch(/^xstate\./)
    expect(runKind.renamedTimers).toEqual({ [LEGACY_DEADLINE]: DEADLINE })
    // The machine takes no event of xstate's names: the runtime renames the old timer's event before parsing it.
    expect(() => runKind.parseEvent({ type: LEGACY_DEADLINE })).toThrow()
    const [s1] = step(start()[0], { type: DEADLINE })
    expect(s1.context.timeUp).toBe(true)
    // Leaving running cancels the deadline; the runtime drops the old-named timer a stored run still holds with it.
    const [done, acts] = step(start()[0], answer('All done.'))
    expect(done.value).toBe('completed')
    const plan = planActions(runKind, 'r1', 3, acts, { [LEGACY_DEADLINE]: 1001, [DEADLINE]: 1002 })
    expect([plan.timers, plan.timerDeletes.sort()]).toEqual([{}, [DEADLINE, LEGACY_DEADLINE].sort()])
  })

  it('the deadline fires after maxSeconds on a simulated clock, not on wall time', () => {
    const clock = new SimulatedClock()
    const actor = createActor(runMachine, { input, clock }).start()
    clock.increment(59_999)
    expect(actor.getSnapshot().context.timeUp).toBe(false)
    clock.increment(1)
    expect(actor.getSnapshot().context.timeUp).toBe(true)
    expect(actor.getSnapshot().value).toEqual({ running: 'thinking' })
    actor.stop()
  })

  it('the final states accept nothing', () => {
    const [s0] = start()
    const finals = [
      step(s0, answer('ok'))[0],
      step(step(s0, { type: 'run.stop' })[0], answer('ok'))[0],
      step(s0, { type: 'model.failed', effectId: 'e', error: { code: 'x', message: 'x', status: 502 } })[0],
      start({ maxCredits: 0 })[0],
    ]
    expect(finals.map(statusOf)).toEqual(['completed', 'stopped', 'failed', 'budget_exhausted'])
    for (const s of finals) {
      expect(RUN_FINAL.has(statusOf(s))).toBe(true)
      expect(s.status).toBe('done')
      for (const e of [{ type: 'run.stop' }, answer('again'), { type: DEADLINE }] as RunEvent[]) expect(step(s, e)[0]).toBe(s)
    }
  })

  it('survives a persist/restore round trip through JSON mid-step, and carries on from it', () => {
    const [s0] = start()
    const [stopping] = step(s0, { type: 'run.stop' })
    for (const s of [s0, stopping]) {
      const restored = roundTrip(s)
      expect(restored.value).toEqual(s.value)
      expect(restored.context).toEqual(s.context)
    }
    const [next] = step(roundTrip(stopping), answer('late answer'))
    expect(next.value).toBe('stopped')
    expect(next.context.steps[0].content).toBe('late answer')
  })

  it('rejects malformed events before the machine sees them', () => {
    expect(() => runKind.parseEvent({ type: 'model.done', effectId: 'e' })).toThrow()
    expect(() => runKind.parseEvent({ type: 'run.explode' })).toThrow()
    expect(runKind.parseEvent({ type: 'run.stop' })).toEqual({ type: 'run.stop' })
  })
})

describe('tool calls', () => {
  const swap = { id: 'c1', name: 'swap_execute', arguments: '{"amountIn":"0.1"}' }
  const price = { id: 'c2', name: 'get_price', arguments: '{}' }
  // The run keys each call of step 1 `1.<index>`; the model's ids are only what it is answered under.
  const keyOf = (callId: string) => (callId === 'c1' ? '1.0' : '1.1')
  const done = (callId: string, result: unknown = { ok: true }, status: 'ok' | 'refused' = 'ok'): RunEvent =>
    ({ type: 'tool.done', effectId: 'e', callId, key: keyOf(callId), status, result, at: '2026-11-24T10:00:01.000Z' })

  it('acts on every tool call, then starts the next step; completes when the model answers without tools', () => {
    const [s1, a1] = step(start()[0], answer('', [swap, price]))
    expect(s1.value).toEqual({ running: 'acting' })
    expect(a1.map((a) => [a.type, a.params])).toEqual([
      [RUN_TOOL_CALL, { callId: 'c1', key: '1.0', name: 'swap_execute', arguments: '{"amountIn":"0.1"}' }],
      [RUN_TOOL_CALL, { callId: 'c2', key: '1.1', name: 'get_price', arguments: '{}' }],
    ])
    expect(s1.context.pending).toEqual(['1.0', '1.1'])
    expect(s1.context.steps[0]).toMatchObject({ acted: true, toolCalls: [{ id: 'c1', status: 'pending' }, { id: 'c2', status: 'pending' }] })
    const [s2] = step(s1, done('c2', { code: 'tool_not_granted' }, 'refused'))
    expect([s2.value, s2.context.pending]).toEqual([{ running: 'acting' }, ['1.0']])
    const [s3, a3] = step(s2, done('c1', { txHash: '0x1' }))
    expect(s3.value).toEqual({ running: 'thinking' })
    expect(a3.map((a) => [a.type, a.params])).toEqual([[RUN_MODEL_CALL, { step: 2 }]])
    expect(s3.context.stepsUsed).toBe(2)
    expect(s3.context.steps[0].toolCalls.map((c: { id: string; status: string; doneAt: string | null }) => [c.id, c.status, c.doneAt])).toEqual([
      ['c1', 'ok', '2026-11-24T10:00:01.000Z'],
      ['c2', 'refused', '2026-11-24T10:00:01.000Z'],
    ])
    const [s4] = step(s3, answer('Swapped.'))
    expect(s4.value).toBe('completed')
    expect(s4.context).toMatchObject({ summary: 'Swapped.', credits: 8, stepsUsed: 2 })
    expect(s4.context.transcript.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant'])
  })

  it('ends budget_exhausted when the steps, the credits or the time run out between steps', () => {
    const acted = (over: Partial<RunInput>, credits = 4) => step(step(start(over)[0], answer('', [swap], credits))[0], done('c1'))[0]
    const steps = acted({ maxSteps: 1 })
    expect([steps.value, steps.context.exhausted, steps.context.stepsUsed]).toEqual(['budget_exhausted', 'maxSteps', 1])
    const credits = acted({}, 100)
    expect([credits.value, credits.context.exhausted]).toEqual(['budget_exhausted', 'maxCredits'])
    const [acting] = step(start()[0], answer('', [swap]))
    const [late] = step(step(acting, { type: DEADLINE })[0], done('c1'))
    expect([late.value, late.context.exhausted]).toEqual(['budget_exhausted', 'maxSeconds'])
  })

  it('run.stop while tool calls are in flight: they complete and are recorded, then the run ends stopped', () => {
    const [acting] = step(start()[0], answer('', [swap, price]))
    const [s1] = step(acting, done('c1'))
    const [s2] = step(s1, { type: 'run.stop' })
    expect(s2.context.stop).toEqual({ inFlight: { modelCall: false, toolCalls: ['c2'] } })
    const [s3, a3] = step(s2, done('c2'))
    expect(s3.value).toBe('stopped')
    expect(a3.map((a) => a.type)).not.toContain(RUN_MODEL_CALL)
    expect(s3.context.steps[0].toolCalls.map((c: { status: string }) => c.status)).toEqual(['ok', 'ok'])
  })

  it('a call that started a child waits for its end; a stop meanwhile names the model call id and lets it finish', () => {
    const [acting] = step(start()[0], answer('', [swap, price]))
    const [s1] = step(acting, { type: 'tool.started', effectId: 'e:3:0', callId: 'c1', key: '1.0', childId: 'op-1', result: { id: 'op-1', status: 'submitting', amountIn: '0.1' } })
    const [s2] = step(s1, done('c2'))
    expect([s2.value, s2.context.pending]).toEqual([{ running: 'acting' }, ['1.0']])
    const [s3] = step(s2, { type: 'run.stop' })
    expect(s3.context.stop).toEqual({ inFlight: { modelCall: false, toolCalls: ['c1'] } })
    const [s4, a4] = step(s3, { type: 'child.done', childId: 'op-1', key: 'op-1', status: 'confirmed', output: { txHash: '0xabc', error: null }, at: '2026-11-24T10:00:09.000Z' })
    expect(s4.value).toBe('stopped')
    expect(a4.filter((a) => a.type === RUN_TOOL_RESULT).map((a) => (a.params as { messageKey: string }).messageKey)).toEqual(['tool:e:3:0'])
    expect(a4.map((a) => a.type)).not.toContain(RUN_MODEL_CALL)
    expect(s4.context.steps[0].toolCalls[0]).toMatchObject({ status: 'ok', doneAt: '2026-11-24T10:00:09.000Z', result: { status: 'confirmed', txHash: '0xabc', amountIn: '0.1' } })
  })

  it('fails with tool_call_failed when the runtime gave up on a tool call', () => {
    const [acting] = step(start()[0], answer('', [swap]))
    const [s1] = step(acting, { type: `${RUN_TOOL_CALL}.failed` as const, effectId: 'e', error: 'boom' })
    expect([s1.value, s1.context.error]).toEqual(['failed', { code: 'tool_call_failed', message: 'boom', status: 502 }])
  })
})
