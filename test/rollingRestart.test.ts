import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { createPublicClient, http } from 'viem'
import { apiClient } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { adminCreateAccount, startServer, stopServer, serverCleanup, type ServerProcess } from './support/server.ts'
import { waitFor } from './support/waitFor.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'

/*
 * `WORKERS=2` under steady load from plain fetch (keep-alive connections, a keyed swap, a chat
 * turn and a read at a time): SIGUSR2 to the primary restarts every node, one at a time. No
 * request fails, every swap answered ran once and every chat turn completed once.
 */
const { servers, cleanups } = serverCleanup()
let primary: ServerProcess | undefined
let model: ModelServer | undefined

afterAll(async () => {
  if (primary) await stopServer(primary).catch(() => {})
  await model?.stop()
})

describe('a rolling restart cuts nothing', () => {
  it('every node restarted under load: 0 failed requests, each swap once, nonces contiguous', async () => {
    const database = await createTestDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), 'alts-rolling-'))
    const db = new pg.Pool({ connectionString: database.url, max: 2 })
    cleanups.push(async () => {
      await db.end()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
    })
    // The load runs unpaced (a read as soon as the last one answered): the per-key limit is raised
    // so that a fast machine measures the restart, not the rate limiter (1,200 a minute by default).
    model = await startModelServer()
    model.mock.on({ predicate: () => true }, { content: 'Noted.', usage: { prompt_tokens: 20, completion_tokens: 2 } })
    const env = { OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', DATABASE_URL: database.url, DATA_DIR: dataDir, WORKERS: '2', SHARD_LEASE_SECONDS: '2', LOG_LEVEL: 'warn', RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_IP: '1000000' }
    primary = await startServer(env)
    servers.push(primary)
    const live = async () => (await db.query<{ id: string }>(
      `select id from service_node where stopped_at is null and expires_at > now() and not leaving`)).rows.map((r) => r.id)
    await waitFor(async () => (await live()).length === 2, 60_000)
    const before = await live()
    const { apiKey } = await adminCreateAccount(env)
    const api = apiClient(`${primary.url}/api/v1`, apiKey)
    const agent = (await api('POST', '/agents', { name: 'rolling', model: 'gpt-4o-mini', skills: [] })).body
    expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '5' })).status).toBe(200)

    let stop = false
    const failed: string[] = []
    const swaps: string[] = []
    let reads = 0
    const turns: string[] = []
    const swapLoad = (async () => {
      for (let i = 0; !stop; i++) {
        const body = { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001', slippageBps: 300 }
        const res = await api('POST', '/swap/execute', body, { 'idempotency-key': `rolling-${i}` }).catch((err: Error) => ({ status: 0, body: err.message }))
        if (res.status === 200) swaps.push(res.body.id)
        else failed.push(`swap ${res.status} ${JSON.stringify(res.body)}`)
      }
    })()
    const readLoad = (async () => {
      while (!stop) {
        const res = await api('GET', `/agents/${agent.id}`).catch((err: Error) => ({ status: 0, body: err.message }))
        if (res.status === 200) reads++
        else failed.push(`read ${res.status} ${JSON.stringify(res.body)}`)
      }
    })()
    const chatLoad = (async () => {
      for (let i = 0; !stop; i++) {
        // Paced by the swaps (a turn for each swap answered): the load measures the restart, not the machine.
        while (!stop && turns.length > swaps.length) await new Promise((r) => setTimeout(r, 25))
        const res = await api('POST', `/agents/${agent.id}/chat`, { message: `turn ${i}` }).catch((err: Error) => ({ status: 0, body: err.message }))
        if (res.status === 200 && res.body.status === 'completed' && res.body.content === 'Noted.') turns.push(res.body.id)
        else failed.push(`chat ${res.status} ${JSON.stringify(res.body)}`)
      }
    })()
    await waitFor(() => swaps.length >= 2 && turns.length >= 2, 30_000)
    process.kill(primary.child.pid!, 'SIGUSR2')
    // Every node of before is gone, two new ones serve.
    await waitFor(async () => {
      const now = await live()
      return now.length === 2 && now.every((id) => !before.includes(id))
    }, 120_000)
    const swapsAtEnd = swaps.length
    const turnsAtEnd = turns.length
    await waitFor(() => swaps.length >= swapsAtEnd + 2 && turns.length >= turnsAtEnd + 2, 30_000)
    stop = true
    await Promise.all([swapLoad, readLoad, chatLoad])

    expect(failed).toEqual([])
    expect(reads).toBeGreaterThan(0)
    const ops = (await db.query<{ id: string; status: string; txs: number }>(
      `select o.id, a.status, (select count(*)::int from chain_tx t join effect e on e.id = t.effect_id where e.actor_id = o.id and t.status = 'confirmed') as txs
         from wallet_op o join actor a on a.id = o.id where o.agent_id = $1`, [agent.id])).rows
    expect(ops.map((o) => o.id).sort()).toEqual([...swaps].sort())
    expect(ops.filter((o) => o.status !== 'confirmed' || o.txs !== 1)).toEqual([])
    const { rpcUrl } = JSON.parse(readFileSync(join(dataDir, 'chain', 'anvil.json'), 'utf8')) as { rpcUrl: string }
    const walletNonce = await createPublicClient({ transport: http(rpcUrl) }).getTransactionCount({ address: agent.walletAddress })
    expect(walletNonce).toBe(swaps.length)
    // Each turn answered once: its user message and one answer, nothing doubled, no other turn.
    const messages = (await db.query<{ turn_id: string; roles: string[] }>(
      `select turn_id, array_agg(role order by created_at) as roles from chat_message where agent_id = $1 group by turn_id`, [agent.id])).rows
    expect(messages.map((m) => m.turn_id).sort()).toEqual([...turns].sort())
    expect(messages.filter((m) => m.roles.join() !== 'user,assistant')).toEqual([])
    const turnStates = (await db.query<{ status: string; n: number }>(
      `select status, count(*)::int as n from actor where kind = 'chatturn' group by status`)).rows
    expect(turnStates).toEqual([{ status: 'completed', n: turns.length }])
    console.info(`rolling restart of 2 nodes: ${swaps.length} swaps, ${turns.length} chat turns and ${reads} reads answered, 0 failed`)
  }, 240_000)
})
