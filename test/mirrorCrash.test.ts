import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import pg from 'pg'
import { apiClient, type Api } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { adminCreateAccount, kill9, startServer, stopServer, serverCleanup } from './support/server.ts'
import { waitFor } from './support/waitFor.ts'
import { automationUntil } from './support/automations.ts'

const { servers, cleanups } = serverCleanup()
const SWAPS = 6

/**
 * A mirror on the service as a child process: the leader swaps 6 times; the service is killed
 * with SIGKILL once the follower's second copy is recorded (the other leader swaps confirmed so
 * far wait in the mirror's inbox), restarted on the same database and chain, and the leader's
 * remaining swaps follow. Exactly one copy per leader swap, each half its amount, all confirmed.
 */
describe('kill -9 during copy trading', () => {
  it('6 leader swaps, a kill -9 after the second copy: exactly 6 copies, one per leader swap', { timeout: 180_000 }, async () => {
    const database = await createTestDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), 'alts-mirror-crash-'))
    const db = new pg.Pool({ connectionString: database.url, max: 2 })
    cleanups.push(async () => {
      await db.end()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
    })
    const env = { DATABASE_URL: database.url, DATA_DIR: dataDir }
    let server = await startServer(env)
    servers.push(server)
    const { apiKey } = await adminCreateAccount(env)
    let api: Api = apiClient(`${server.url}/api/v1`, apiKey)
    const agent = async (name: string) => {
      const id = (await api('POST', '/agents', { name, skills: ['trading'] })).body.id as string
      expect((await api('POST', '/dev/faucet', { agentId: id, eth: '5' })).status).toBe(200)
      expect((await api('POST', `/agents/${id}/start`)).status).toBe(200)
      return id
    }
    const leader = await agent('leader')
    const follower = await agent('follower')
    const created = await api('POST', '/automations', { agent_id: follower, name: 'copy', kind: 'mirror', mirror: { leaderAgentId: leader, ratio: 0.5, maxPerTradeUsd: '1000', maxDelaySeconds: 3600 } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const id = created.body.id as string
    const copies = async () => Number((await db.query(`select count(*)::int as n from wallet_op where parent_id = $1`, [id])).rows[0].n)

    const leaderSwaps: string[] = []
    let killed = false
    for (let i = 0; i < SWAPS; i++) {
      const res = await api('POST', '/swap/execute', { agentId: leader, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: `0.00${i + 1}`, slippageBps: 5000 })
      expect(res.body.status, JSON.stringify(res.body)).toBe('confirmed')
      leaderSwaps.push(res.body.id)
      if (!killed && i >= 2) {
        await waitFor(async () => (await copies()) >= 2, 60_000)
        await kill9(server)
        killed = true
        server = await startServer(env)
        servers.push(server)
        api = apiClient(`${server.url}/api/v1`, apiKey)
      }
    }
    const done = await automationUntil(api, id, (a) => a.firings.length >= SWAPS && a.status === 'armed', 90_000)
    const firings = done.firings as Array<{ leaderSwapId: string; outcome: string }>
    expect(firings.map((f) => f.leaderSwapId).sort()).toEqual([...leaderSwaps].sort())
    expect(firings.every((f) => f.outcome === 'ok'), JSON.stringify(firings)).toBe(true)

    // One copy per leader swap (keyed by it), each confirmed, each half the leader's amount.
    const { rows: ops } = await db.query(
      `select x.status, x.snapshot->'context'->'params'->>'amountIn' as amount from wallet_op w join actor x on x.id = w.id where w.parent_id = $1`, [id],
    )
    expect(ops).toHaveLength(SWAPS)
    expect(ops.every((o) => o.status === 'confirmed'), JSON.stringify(ops)).toBe(true)
    expect(ops.map((o) => BigInt(o.amount)).sort((a, b) => (a < b ? -1 : 1))).toEqual(Array.from({ length: SWAPS }, (_, i) => BigInt(i + 1) * 10n ** 15n / 2n))
    const { rows: txs } = await db.query(`select nonce::int as nonce from chain_tx where agent_id = $1 order by nonce`, [follower])
    expect(txs.map((t) => t.nonce)).toEqual(txs.map((_, i) => i))
    await stopServer(server)
  })
})
