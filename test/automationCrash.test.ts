import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import pg from 'pg'
import { apiClient, type Api } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { adminCreateAccount, startServer, stopServer, serverCleanup } from './support/server.ts'
import { waitFor } from './support/waitFor.ts'

const { servers, cleanups } = serverCleanup()
/** The outage the scenario asks for: the service is down this long (five DCA periods), not a wait for a condition. */
const OUTAGE_MS = 10_000

async function until(api: Api, id: string, done: (a: any) => boolean, timeoutMs = 60_000) {
  let a: any
  await waitFor(async () => done((a = (await api('GET', `/automations/${id}`)).body)), timeoutMs)
  return a
}

// Both catch-up policies side by side: each has its own server, chain and database.
describe.concurrent('kill -9 at a DCA firing, then a 10 s outage', () => {
  it.each(['once', 'skip'] as const)('catch_up %s: no firing doubled, the outage caught up as the policy says, nonces contiguous', { timeout: 180_000 }, async (catchUp) => {
    const database = await createTestDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), `alts-automation-crash-${catchUp}-`))
    const db = new pg.Pool({ connectionString: database.url, max: 2 })
    cleanups.push(async () => {
      await db.end()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
    })
    const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, AUTOMATION_MIN_INTERVAL_SECONDS: '1' }
    // The first swap's send kills the server once its transaction is broadcast: the firing is
    // committed, its swap is on chain, and nothing has recorded the receipt yet.
    let server = await startServer({ ...env, FAULT_INJECT: 'after_broadcast' })
    servers.push(server)
    const { apiKey } = await adminCreateAccount(env)
    let api = apiClient(`${server.url}/api/v1`, apiKey)
    const agent = (await api('POST', '/agents', { name: 'dca', skills: ['trading'] })).body
    expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '5' })).status).toBe(200)
    expect((await api('POST', `/agents/${agent.id}/start`)).status).toBe(200)
    const exited = new Promise<void>((resolve) => server.child.once('exit', () => resolve()))
    const created = await api('POST', '/automations', {
      agent_id: agent.id, name: 'dca', kind: 'dca', catch_up: catchUp, dca: { tokenIn: 'ETH', tokenOut: 'USDC', amountPerRun: '0.001', everySeconds: 2 },
    }).catch(() => undefined)
    await exited
    expect(server.child.signalCode).toBe('SIGKILL')
    await new Promise((r) => setTimeout(r, OUTAGE_MS))

    server = await startServer(env)
    servers.push(server)
    api = apiClient(`${server.url}/api/v1`, apiKey)
    const [{ id }] = (await db.query(`select id from actor where kind = 'automation'`)).rows
    if (created) expect(created.body.id).toBe(id)
    // Three firings after the restart's start: the one in flight, then what the policy does, then regular ticks.
    await until(api, id, (a) => a.runCount >= 3)
    expect((await api('PATCH', `/automations/${id}`, { status: 'paused' })).status).toBe(200)
    const a = await until(api, id, (x) => x.status === 'paused')
    const firings = [...a.firings].reverse() as Array<{ number: number; outcome: string; catchUp: boolean; txHash: string; at: string }>
    expect(firings.every((f) => f.outcome === 'ok'), JSON.stringify(firings)).toBe(true)
    // One catch-up firing for the whole outage under `once`; none under `skip`.
    expect(firings.filter((f) => f.catchUp).length, JSON.stringify(firings)).toBe(catchUp === 'once' ? 1 : 0)
    if (catchUp === 'once') expect(firings[1]!.catchUp).toBe(true)

    // No firing doubled: one swap operation per firing, one transaction per swap, all confirmed.
    const { rows: ops } = await db.query(
      `select w.id, x.status, x.snapshot->'context'->>'txHash' as hash from wallet_op w join actor x on x.id = w.id where w.parent_id = $1`, [id],
    )
    expect(ops).toHaveLength(a.runCount)
    expect(ops.every((o) => o.status === 'confirmed')).toBe(true)
    expect(new Set(ops.map((o) => o.hash)).size).toBe(ops.length)
    // Nonces contiguous from 0: nothing signed twice for a nonce, no gap.
    const { rows: txs } = await db.query(`select nonce::int as nonce from chain_tx where agent_id = $1 order by nonce`, [agent.id])
    expect(txs.map((t) => t.nonce)).toEqual(txs.map((_, i) => i))
    expect(txs).toHaveLength(ops.length)
    await stopServer(server)
  })
})
