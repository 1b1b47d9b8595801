import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { automationUntil } from './support/automations.ts'
import { createdWithParentsRecord } from './support/childCommit.ts'
import { createAutomationEffects } from '../src/actors/automation/automation.effects.ts'
import { createToolPort } from '../src/tools/toolPort.ts'
import { AUTOMATION_FIRE } from '../src/actors/automation/automation.machine.ts'
import type { EffectContext, EffectRow, FinishWrite } from '../src/actors/runtime/actorKind.ts'
import { runInEffectScope } from '../src/actors/runtime/effectScope.ts'
import { createAutomationsStore } from '../src/adapters/db/automations.store.ts'
import { stableUuid } from '../src/domain/util/stableUuid.ts'
import { reserveSpend, spentTodayUsd } from '../src/adapters/db/walletOp.store.ts'

/**
 * A child started by a step of its parent (an automation's firing, a model's tool call) is
 * created with that step's outcome, in the commit of the parent's transition that records it.
 * An attempt that reserved its swap and died before its outcome committed left a reservation
 * and no swap: the retry makes that swap once, and a retry that starts nothing gives the
 * reservation back. Real app, Postgres and anvil.
 */
let app: TestApp
let api: Api
let accountId: string

const q = async (sql: string, values: unknown[] = []) => (await app.services.pool.query(sql, values)).rows
const sentTxs = async (agentId: string) => (await q(`select count(*)::int as n from chain_tx where agent_id = $1`, [agentId]))[0].n as number

const until = (id: string, done: (a: any) => boolean, timeoutMs?: number) => automationUntil(api, id, done, timeoutMs)

/** A running agent with ETH, and a swap automation of it that fires only when triggered by hand. */
async function swapAutomation(name: string) {
  const agent: string = (await api('POST', '/agents', { name, skills: ['trading'] })).body.id
  expect((await api('POST', '/dev/faucet', { agentId: agent, eth: '1' })).status).toBe(200)
  expect((await api('POST', `/agents/${agent}/start`)).status).toBe(200)
  const created = await api('POST', '/automations', {
    agent_id: agent, name,
    trigger: { type: 'interval', everySeconds: 3600, startAt: new Date(Date.now() + 3_600_000).toISOString() },
    action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001' } },
  })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  return { agent, automation: created.body.id as string, opId: stableUuid(accountId, 'tool/swap_execute', `automation:${created.body.id}:1`) }
}

/**
 * Firing 1's effect run as a worker that dies before its outcome commits: whatever it wrote
 * itself is kept, the writes it left for its outcome (the child's creation) are lost.
 */
async function attemptThatDies(automation: string) {
  const store = createAutomationsStore(app.services.pool)
  const fire = createAutomationEffects({ core: () => app.services.core, tools: createToolPort(() => app.services.core), store })[AUTOMATION_FIRE]!
  const row = (await store.get(automation))!
  const effect = { id: 'lost-attempt', actorId: automation, accountId, kind: AUTOMATION_FIRE, params: { number: 1, source: { source: 'timer' } }, status: 'pending', externalRef: null, result: null, attempts: 0, firstRun: false } as EffectRow
  const lost: FinishWrite[] = []
  const ctx = { context: async () => row.ctx, finishWith: (w: FinishWrite) => void lost.push(w) } as unknown as EffectContext
  const event = await runInEffectScope({ actorId: automation, finishWith: ctx.finishWith }, () => fire(effect, ctx))
  return { event, lost }
}

beforeAll(async () => {
  app = await startTestApp({ AUTOMATION_MIN_INTERVAL_SECONDS: '1' }, { withChain: true })
  ;({ api, accountId } = await app.account())
})
afterAll(async () => {
  await app?.close()
})

describe('a child created with its parent step’s outcome', () => {
  it("a firing's swap exists only once the firing's outcome committed; its retry makes that swap once, in the automation's commit", async () => {
    const { agent, automation, opId } = await swapAutomation('retried after a crash')
    const { event, lost } = await attemptThatDies(automation)
    expect(event).toMatchObject({ type: 'fire.started', childId: opId })
    expect(lost).toHaveLength(1)
    // The attempt reserved the swap's spend under the agent's lock, and started no swap.
    expect(await q(`select parent_id from wallet_op where id = $1`, [opId])).toEqual([{ parent_id: automation }])
    expect(await q(`select id from actor where id = $1`, [opId])).toEqual([])
    expect(await sentTxs(agent)).toBe(0)

    expect((await api('POST', `/automations/${automation}/trigger`)).status).toBe(200)
    const fired = await until(automation, (a) => a.firings.some((f: { number: number; outcome: string }) => f.outcome !== 'executing' && f.number === 1) && a.status !== 'executing')
    expect(fired.firings.find((f: { number: number }) => f.number === 1)).toMatchObject({ outcome: 'ok' })
    // One swap, under the id the lost attempt reserved, one reservation; created by the commit
    // that recorded the firing's start (the journal rows share their transaction id).
    expect(await sentTxs(agent)).toBe(1)
    expect(await q(`select id, parent_id, status from actor where kind = 'walletop' and parent_id = $1`, [automation])).toEqual([{ id: opId, parent_id: automation, status: 'confirmed' }])
    expect(await q(`select id from wallet_op where parent_id = $1`, [automation])).toEqual([{ id: opId }])
    expect(await createdWithParentsRecord(q, [opId], 'fire.started')).toEqual([{ parent_id: automation, same: true }])
  })

  it('a parent that ended before its step\'s outcome committed gets no child: the reservation is given back, nothing is sent', async () => {
    const { agent, automation, opId } = await swapAutomation('cancelled meanwhile')
    const { lost } = await attemptThatDies(automation)
    expect((await api('DELETE', `/automations/${automation}`)).body).toMatchObject({ status: 'cancelled' })
    // The step's outcome written now, after its parent ended.
    const db = await app.services.pool.connect()
    try {
      await db.query('begin')
      // Outside the parent's own commit the creation is its transaction form (the parent's end checked there).
      const lostWrite = lost[0]!
      const write = typeof lostWrite === 'function' ? lostWrite : lostWrite.inTransaction!
      expect(await write(db)).toBeUndefined()
      await db.query('commit')
    } finally {
      db.release()
    }
    expect(await q(`select id from actor where id = $1`, [opId])).toEqual([])
    expect(await q(`select id from wallet_op where id = $1`, [opId])).toEqual([])
    expect(await sentTxs(agent)).toBe(0)
  })

  it('a retried firing that starts nothing (its agent stopped meanwhile) gives back what the lost attempt reserved', async () => {
    const { agent, automation, opId } = await swapAutomation('stopped after a crash')
    await attemptThatDies(automation)
    expect(await q(`select id from wallet_op where id = $1`, [opId])).toEqual([{ id: opId }])
    expect((await api('POST', `/agents/${agent}/stop`)).status).toBe(200)

    const triggered = await api('POST', `/automations/${automation}/trigger`)
    expect(triggered.status, JSON.stringify(triggered.body)).toBe(200)
    const skipped = await until(automation, (a) => a.firings.some((f: { number: number; outcome: string }) => f.number === 1 && f.outcome === 'skipped'))
    expect(skipped.firings[0]).toMatchObject({ number: 1, reason: expect.stringMatching(/^agent_not_running/) })
    // The reservation no longer counts toward the agent's 24-hour spend; nothing was sent.
    expect(await q(`select id from wallet_op where id = $1`, [opId])).toEqual([])
    expect(await q(`select id from actor where id = $1`, [opId])).toEqual([])
    expect(await sentTxs(agent)).toBe(0)
  })

  it('a reservation no actor came of counts toward the daily spend for 10 minutes after it was last made, then is abandoned; a retry makes it again', async () => {
    const { agent } = await swapAutomation('abandoned reservations')
    const reserve = (id: string, usdValue: string) => reserveSpend(app.services.pool, { id, accountId, agentId: agent, kind: 'swap', usdValue })
    await reserve('abandoned-swap', '40')
    await reserve('fresh-swap', '2')
    await q(`update wallet_op set created_at = now() - interval '11 minutes' where id = 'abandoned-swap'`)
    expect(Number(await spentTodayUsd(app.services.pool, agent))).toBe(2)
    // The step retried: the same record, counted again from now.
    await reserve('abandoned-swap', '40')
    expect(Number(await spentTodayUsd(app.services.pool, agent))).toBe(42)
    expect(await q(`select count(*)::int as n from wallet_op where agent_id = $1`, [agent])).toEqual([{ n: 2 }])
  })
})
