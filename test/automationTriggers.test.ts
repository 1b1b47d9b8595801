import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWalletClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { planLaunch } from '../src/adapters/chain/launchTx.ts'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { waitFor } from './support/waitFor.ts'
import { expectReplaysFromMigration } from './support/replayCheck.ts'
import { automationKind } from '../src/actors/automation/automation.machine.ts'
import { automationUntil } from './support/automations.ts'

/**
 * Automations fired by the chain, as the indexer adds blocks: a launch mined while a sniper is
 * executing a firing is bought after that firing. Real app, Postgres and anvil. (A limit order
 * firing once and a sniper buying a matching launch are shown on the service as a child process:
 * automationScenarios.test.ts, 2a and 2b.)
 */
let app: TestApp
let api: Api

const q = async (sql: string, values: unknown[] = []) => (await app.services.pool.query(sql, values)).rows

const until = (id: string, done: (a: any) => boolean, timeoutMs?: number) => automationUntil(api, id, done, timeoutMs)

async function agent(name: string, skills: string[], eth = '5') {
  const id = (await api('POST', '/agents', { name, skills })).body.id as string
  expect((await api('POST', '/dev/faucet', { agentId: id, eth })).status).toBe(200)
  expect((await api('POST', `/agents/${id}/start`)).status).toBe(200)
  return id
}

/** anvil's third dev account: launches straight on the chain, from a wallet the service does not manage. */
const OUTSIDER_KEY = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a'

/** Sends a venue-a launch of `symbol` to the chain and answers its hash (mined by the caller when automine is off). */
async function sendLaunch(symbol: string) {
  const { chain, rpcUrl, manifest, publicClient } = app.services.chain!
  const account = privateKeyToAccount(OUTSIDER_KEY)
  const nonce = await publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' })
  const [tx] = planLaunch(manifest, { venue: 'venue-a', symbol, name: symbol, quote: 'ETH', seedAmount: null }, account.address, nonce)
  return createWalletClient({ account, chain, transport: http(rpcUrl) }).sendTransaction({ to: tx!.to, data: tx!.data, nonce, gas: 5_000_000n })
}
const rpc = (method: string, params: unknown[] = []) => app.services.chain!.publicClient.request({ method: method as never, params: params as never })

beforeAll(async () => {
  app = await startTestApp({ AUTOMATION_MIN_INTERVAL_SECONDS: '1' }, { withChain: true })
  ;({ api } = await app.account())
})
afterAll(async () => {
  await app?.close()
})

describe('automations fired by the chain', () => {
  it('a launch mined while the sniper is executing a firing is bought after that firing', async () => {
    const sniper = await agent('busy-sniper', ['trading'])
    const wallet = (await api('GET', `/agents/${sniper}`)).body.walletAddress as `0x${string}`
    const created = await api('POST', '/automations', {
      agent_id: sniper, name: 'busy sniper', kind: 'sniper',
      sniper: { quote: 'ETH', amountIn: '0.01', maxBuys: 2, venue: 'venue-a', symbolPattern: 'BUSY*', slippageBps: 2000 },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const { publicClient } = app.services.chain!
    // Blocks are mined by hand: the first launch's block starts firing 1, whose swap then waits
    // in the mempool (the automation is executing) until the block that also holds the second launch.
    await rpc('evm_setAutomine', [false])
    try {
      await sendLaunch('BUSYONE')
      await rpc('evm_mine')
      const sent = async () => (await publicClient.getTransactionCount({ address: wallet, blockTag: 'pending' })) > (await publicClient.getTransactionCount({ address: wallet }))
      await waitFor(sent, 30_000)
      expect((await api('GET', `/automations/${created.body.id}`)).body.status).toBe('executing')
      await sendLaunch('BUSYTWO')
      await rpc('evm_mine')
    } finally {
      await rpc('evm_setAutomine', [true])
    }
    // Firing 2 (the launch that came during firing 1) follows once firing 1 ends.
    const done = await until(created.body.id, (a) => a.status === 'completed')
    expect(done).toMatchObject({ status: 'completed', runCount: 2, completedReason: 'max_firings_reached' })
    const tokens = await q(`select address from token where symbol in ('BUSYONE', 'BUSYTWO') order by block_number`)
    const bought = await q(`select x.snapshot->'context'->'params'->>'tokenOut' as token from wallet_op w join actor x on x.id = w.id where w.parent_id = $1 order by w.created_at`, [created.body.id])
    expect(bought.map((b) => b.token)).toEqual(tokens.map((t) => t.address.toLowerCase()))
  })

  it('a DCA created twice with one key and triggered during its first firing fires the trigger after it, and its next timer firing waits for the next tick', async () => {
    const trader = await agent('dca-during-firing', ['trading'])
    expect((await api('POST', '/dev/faucet', { agentId: trader, usdc: '100' })).status).toBe(200)
    const wallet = (await api('GET', `/agents/${trader}`)).body.walletAddress as `0x${string}`
    const body = { agent_id: trader, name: 'hourly', kind: 'dca', dca: { tokenIn: 'USDC', tokenOut: 'TSLAx', amountPerRun: '1', everySeconds: 3600, maxRuns: 3, slippageBps: 300 } }
    const { publicClient } = app.services.chain!
    // Firing 1 (the interval's first tick, at creation) sends its transaction, which stays in the
    // mempool: the automation is executing when the creation comes again and the trigger arrives.
    await rpc('evm_setAutomine', [false])
    let id: string
    try {
      const created = await api('POST', '/automations', body, { 'idempotency-key': 'dca-during-firing' })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      id = created.body.id
      const sent = async () => (await publicClient.getTransactionCount({ address: wallet, blockTag: 'pending' })) > (await publicClient.getTransactionCount({ address: wallet }))
      await waitFor(sent, 30_000)
      expect((await api('POST', '/automations', body, { 'idempotency-key': 'dca-during-firing' })).body.id).toBe(id)
      expect((await api('GET', `/automations/${id}`)).body).toMatchObject({ status: 'executing', runCount: 0 })
      const triggered = await api('POST', `/automations/${id}/trigger`)
      expect(triggered.status, JSON.stringify(triggered.body)).toBe(200)
    } finally {
      await rpc('evm_setAutomine', [true])
      await rpc('evm_mine')
    }
    // Firing 2 (the trigger) runs after firing 1; then the automation waits for the tick an hour on.
    const after = await until(id, (a) => a.runCount >= 2 && a.status !== 'executing')
    const createdAt = (await q(`select snapshot->'context'->>'createdAt' as at from actor where id = $1`, [id]))[0].at as string
    const nextTick = new Date(Date.parse(createdAt) + 3_600_000).toISOString()
    expect(after).toMatchObject({ status: 'armed', runCount: 2, nextRunAt: nextTick, lastError: null })
    expect(after.firings.map((f: { number: number; source: string; outcome: string; catchUp: boolean }) => `${f.number}:${f.source}:${f.outcome}:${f.catchUp}`)).toEqual(['2:manual:ok:false', '1:timer:ok:false'])
    // The one timer it holds is due at that tick (set from the database's clock), not now.
    const timers = await q(`select extract(epoch from due_at) * 1000 as ms from actor_timer where actor_id = $1`, [id])
    expect(timers).toHaveLength(1)
    expect(Math.abs(Number(timers[0].ms) - Date.parse(nextTick))).toBeLessThan(5_000)
    // Two swaps, the firings' children, each confirmed on chain with the firing's hash.
    const ops = await q(`select x.status, x.snapshot->'context'->>'txHash' as hash from wallet_op w join actor x on x.id = w.id where w.parent_id = $1 order by w.created_at`, [id])
    expect(ops.map((o) => o.status)).toEqual(['confirmed', 'confirmed'])
    expect(ops.map((o) => o.hash)).toEqual(after.firings.map((f: { txHash: string }) => f.txHash).reverse())
    for (const o of ops) expect((await publicClient.getTransactionReceipt({ hash: o.hash })).status).toBe('success')
  })

  it('an hourly DCA stored by machine version 1 armed on the tick it had served (a trigger waited behind that firing) waits for the next tick', async () => {
    const trader = await agent('dca-v1', ['trading'])
    const body = { agent_id: trader, name: 'hourly', kind: 'dca', dca: { tokenIn: 'ETH', tokenOut: 'USDC', amountPerRun: '0.001', everySeconds: 3600, maxRuns: 3, slippageBps: 300 } }
    const { id } = (await api('POST', '/automations', body)).body
    await until(id, (a) => a.runCount === 1 && a.status === 'armed')
    // Rewrite it as version 1 left it after 1:timer then 2:manual (the trigger that waited): its
    // nextRunAt still on the tick firing 1 served, its version 1 timer due in a second.
    const tick = new Date(Date.now() - 2000).toISOString()
    const record = (number: number, source: string, ms: number) => ({ number, at: new Date(Date.now() - ms).toISOString(), source, catchUp: false, outcome: 'ok', txHash: null, reason: null, childId: null })
    const legacy = 'xstate.after.due.automation.armed.timed'
    await app.services.pool.query(
      `with v1 as (
         update actor set machine_version = 1, timers = jsonb_build_object($2::text, 999000),
                snapshot = jsonb_set(snapshot, '{context}', (snapshot->'context') - 'lastTimerAt' || jsonb_build_object('nextRunAt', $3::text, 'firings', $4::jsonb, 'firingNumber', 2, 'runCount', 2))
          where id = $1 returning id, account_id
       ), gone as (delete from actor_timer where actor_id = $1)
       insert into actor_timer (actor_id, timer_key, account_id, generation, due_at, event)
       select id, $2, account_id, 999000, now() + interval '1 second', jsonb_build_object('type', $2::text) from v1`,
      [id, legacy, tick, JSON.stringify([record(1, 'timer', 1500), record(2, 'manual', 1000)])],
    )
    app.services.runtime.forget(id)
    // The old timer fires (its inbox row, processed); the machine hears it as its own `automation.due` (the kind's renamedTimers).
    const heard = async () => (await q(`select count(*)::int as n from actor_inbox where actor_id = $1 and timer_key = $2 and processed_at is not null`, [id, legacy]))[0].n
    await waitFor(async () => (await heard()) === 1, 10_000)
    const next = new Date(Date.parse(tick) + 3_600_000).toISOString()
    const [row] = await q(`select machine_version, timers, status from actor where id = $1`, [id])
    expect(row).toMatchObject({ machine_version: 2, timers: { 'automation.due': expect.any(Number) }, status: 'armed' })
    expect(Object.keys(row.timers)).toEqual(['automation.due'])
    expect(await q(`select seq from actor_journal where actor_id = $1 and event->>'type' = $2`, [id, legacy])).toEqual([])
    expect((await api('GET', `/automations/${id}`)).body).toMatchObject({ status: 'armed', runCount: 2, nextRunAt: next })
    const [timer] = await q(`select extract(epoch from due_at) * 1000 as ms from actor_timer where actor_id = $1`, [id])
    expect(Math.abs(Number(timer.ms) - Date.parse(next))).toBeLessThan(5_000)
    // Its journal spans the bump (the loader journaled the migration) and replays to what is stored.
    await expectReplaysFromMigration(app.services.pool, automationKind, id, 1)
  })
})
