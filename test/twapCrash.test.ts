import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import pg from 'pg'
import { parseEther } from 'viem'
import { apiClient } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { adminCreateAccount, kill9, startServer, stopServer, serverCleanup } from './support/server.ts'
import { waitFor } from './support/waitFor.ts'
import { automationUntil } from './support/automations.ts'

const { servers, cleanups } = serverCleanup()

/**
 * A TWAP of 5 slices on the service as a child process: kill -9 once its second slice is done
 * and the third's swap is recorded (in flight), then a restart on the same database and chain. Exactly 5 swaps,
 * one per slice, all confirmed, adding up to the total; nonces contiguous.
 */
describe('kill -9 during a TWAP', () => {
  it('5 slices, a kill -9 after the second: exactly 5 swaps, one per slice, the total exact', { timeout: 180_000 }, async () => {
    const database = await createTestDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), 'alts-twap-crash-'))
    const db = new pg.Pool({ connectionString: database.url, max: 2 })
    cleanups.push(async () => {
      await db.end()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
    })
    const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, AUTOMATION_MIN_INTERVAL_SECONDS: '1' }
    let server = await startServer(env)
    servers.push(server)
    const { apiKey } = await adminCreateAccount(env)
    let api = apiClient(`${server.url}/api/v1`, apiKey)
    const agent = (await api('POST', '/agents', { name: 'twap', skills: ['trading'] })).body
    expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '5' })).status).toBe(200)
    expect((await api('POST', `/agents/${agent.id}/start`)).status).toBe(200)

    const total = '0.005'
    const created = await api('POST', '/automations', {
      agent_id: agent.id, name: 'twap', kind: 'twap', twap: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: total, slices: 5, overSeconds: 10, maxPriceImpactBps: 1000 },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body).toMatchObject({ kind: 'twap', triggerType: 'interval', slices: 5, slicesLeft: expect.any(Number), trigger: { everySeconds: 2, maxRuns: 5 } })
    const id = created.body.id as string

    // Two slices done and the third's swap recorded (in flight: maybe signed, maybe sent), read from the database: then the kill.
    const state = async () => (await db.query(
      `select (snapshot->'context'->>'runCount')::int as done, (select count(*)::int from wallet_op where parent_id = $1) as ops from actor where id = $1`, [id],
    )).rows[0] as { done: number; ops: number }
    await waitFor(async () => (await state()).ops >= 3, 60_000)
    await kill9(server)
    expect(await state()).toMatchObject({ ops: 3 })
    expect((await state()).done).toBeGreaterThanOrEqual(2)
    server = await startServer(env)
    servers.push(server)
    api = apiClient(`${server.url}/api/v1`, apiKey)

    const done = await automationUntil(api, id, (a) => a.status === 'completed', 60_000)
    expect(done).toMatchObject({ runCount: 5, slicesDone: 5, slicesLeft: 0, completedReason: 'max_firings_reached' })
    const firings = [...done.firings].reverse() as Array<{ slice: number; outcome: string }>
    expect(firings.map((f) => [f.slice, f.outcome])).toEqual([[1, 'ok'], [2, 'ok'], [3, 'ok'], [4, 'ok'], [5, 'ok']])

    // One swap per slice, each confirmed with its own transaction; the slices add up to the total exactly.
    const { rows: ops } = await db.query(
      `select x.status, x.snapshot->'context'->>'txHash' as hash, x.snapshot->'context'->'params'->>'amountIn' as amount
         from wallet_op w join actor x on x.id = w.id where w.parent_id = $1`, [id],
    )
    expect(ops).toHaveLength(5)
    expect(ops.every((o) => o.status === 'confirmed'), JSON.stringify(ops)).toBe(true)
    expect(new Set(ops.map((o) => o.hash)).size).toBe(5)
    expect(ops.reduce((s, o) => s + BigInt(o.amount), 0n)).toBe(parseEther(total))
    const { rows: txs } = await db.query(`select nonce::int as nonce from chain_tx where agent_id = $1 order by nonce`, [agent.id])
    expect(txs.map((t) => t.nonce)).toEqual(txs.map((_, i) => i))
    expect(txs).toHaveLength(5)
    await stopServer(server)
  })
})
