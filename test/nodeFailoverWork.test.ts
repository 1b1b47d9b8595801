import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { createPublicClient, http } from 'viem'
import { apiClient, type Api } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { adminCreateAccount, kill9, startServer, stopServer, serverCleanup, type ServerProcess } from './support/server.ts'
import { waitFor } from './support/waitFor.ts'
import { GENERIC_RUN_GOAL } from '../src/domain/runs/startScheduledRun.ts'

/*
 * Three node processes on one database, one chain and one scripted model server. A node is
 * killed (kill -9) while a chat turn and a run wait for slow model answers on it, a launch it
 * took is under way and another agent's scheduled runs go on: everything it held moves to the
 * survivors and completes exactly once.
 */
const LEASE_SECONDS = 2
const SLOW_MS = 2_500
const FINAL: Record<string, string[]> = {
  chatturn: ['completed', 'failed'], run: ['completed', 'stopped', 'failed', 'budget_exhausted'],
  launch: ['live', 'failed'], walletop: ['confirmed', 'failed'],
}
const { servers, cleanups } = serverCleanup()
let model: ModelServer
let db: pg.Pool
let nodes: ServerProcess[]
let account: { accountId: string; apiKey: string }
let rpcUrl: string

const api = (n: ServerProcess): Api => apiClient(`${n.url}/api/v1`, account.apiKey)
const asked = (text: string) =>
  model.mock.getRequests().filter((r) => ((r.body as { messages?: Array<{ role: string; content: string }> } | null)?.messages ?? []).some((m) => m.role === 'user' && m.content === text)).length

beforeAll(async () => {
  model = await startModelServer()
  const database = await createTestDatabase()
  const dataDir = mkdtempSync(join(tmpdir(), 'alts-nodes-work-'))
  db = new pg.Pool({ connectionString: database.url, max: 2 })
  cleanups.push(async () => {
    await db.end()
    await database.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  const env = {
    DATABASE_URL: database.url, DATA_DIR: dataDir, SHARD_LEASE_SECONDS: String(LEASE_SECONDS), LOG_LEVEL: 'warn',
    OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', RUN_MIN_INTERVAL_SECONDS: '1',
  }
  const a = await startServer(env)
  servers.push(a)
  rpcUrl = (JSON.parse(readFileSync(join(dataDir, 'chain', 'anvil.json'), 'utf8')) as { rpcUrl: string }).rpcUrl
  const joinEnv = { ...env, CHAIN_RPC_URL: rpcUrl.replace(/^http/, 'ws'), DEPLOYMENT_MANIFEST: join(dataDir, 'chain', 'manifest.json'), CHAIN_DEV: '1' }
  const [b, c] = await Promise.all([startServer(joinEnv), startServer(joinEnv)])
  servers.push(b, c)
  nodes = [a, b, c]
  account = await adminCreateAccount(env)
  await waitFor(async () => (await db.query(
    `select count(*)::int as n from service_node n where n.stopped_at is null and n.expires_at > now()
        and (select count(*) from shard_lease l where l.owner = n.id and l.expires_at > now()) >= 20`)).rows[0].n === 3, 20_000)
}, 120_000)
afterAll(async () => {
  for (const n of nodes ?? []) await stopServer(n).catch(() => {})
  await model?.stop()
})

describe('three nodes: kill -9 of one with a launch, a chat turn, a run and scheduled runs in flight', () => {
  it('moves everything it held to the survivors; each piece completes once, each model call is billed once, nothing stays pending', async () => {
    const [a, victim] = nodes as [ServerProcess, ServerProcess]
    model.mock.on({ userMessage: 'slow chat', hasToolResult: false }, { content: 'Done talking.', usage: { prompt_tokens: 100, completion_tokens: 5 } }, { chaos: { latencyMs: SLOW_MS } })
    model.mock.on({ userMessage: 'slow run', hasToolResult: false }, { content: 'Run done.', usage: { prompt_tokens: 100, completion_tokens: 5 } }, { chaos: { latencyMs: SLOW_MS } })
    model.mock.on({ userMessage: GENERIC_RUN_GOAL, hasToolResult: false }, { content: 'Nothing worth doing.', usage: { prompt_tokens: 50, completion_tokens: 3 } })
    const worker = (await api(a)('POST', '/agents', { name: 'worker', skills: ['trading', 'token-launch'] })).body
    const scheduled = (await api(a)('POST', '/agents', { name: 'scheduled', run_interval_seconds: 1 })).body
    expect((await api(a)('POST', '/dev/faucet', { agentId: worker.id, eth: '5' })).status).toBe(200)
    expect((await api(a)('POST', `/agents/${scheduled.id}/start`)).status).toBe(200)
    await waitFor(async () => (await api(a)('GET', `/agents/${scheduled.id}/runs`)).body.runs?.length >= 1, 20_000)

    // The victim takes a chat turn and a run (both wait for a slow model answer) and a launch.
    const chat = api(victim)('POST', `/agents/${worker.id}/chat`, { message: 'slow chat' }).catch(() => null)
    const run = await api(victim)('POST', `/agents/${worker.id}/runs`, { goal: 'slow run' })
    expect(run.status).toBe(202)
    const launch = await api(victim)('POST', '/launch/venue-a', { agentId: worker.id, symbol: 'FAIL', name: 'Failover', quote: 'ETH' }, { 'idempotency-key': 'failover-launch' })
    expect(launch.status).toBe(202)
    // Both model calls are out on the victim (their effects claimed by it, not finished).
    const victimId = async () => (await db.query(`select id from service_node where pid = $1`, [victim.child.pid])).rows[0].id as string
    const modelCalls = async () => (await db.query<{ actor_kind: string; status: string; claimed_by: string }>(
      `select a.kind as actor_kind, e.status, e.claimed_by from effect e join actor a on a.id = e.actor_id
        where ((a.kind = 'chatturn' and a.account_id = $1) or a.id = $2) and e.kind in ('chat.model', 'run.model') order by a.kind`, [account.accountId, run.body.id])).rows
    const victimNode = await victimId()
    await waitFor(async () => {
      const calls = await modelCalls()
      return calls.length === 2 && calls.every((c) => c.status === 'pending' && c.claimed_by === victimNode)
    }, 20_000)
    const runsBefore = (await api(a)('GET', `/agents/${scheduled.id}/runs`)).body.runs.length as number
    await kill9(victim, { group: false })
    await chat

    // The survivors finish what it held: the turn and the run ask the model again, the launch goes live.
    const turnId = (await db.query(`select id from actor where kind = 'chatturn'`)).rows[0].id as string
    let turn: any
    await waitFor(async () => (turn = (await api(a)('GET', `/agents/${worker.id}/chat/${turnId}`)).body).status === 'completed', 60_000)
    expect(turn.content).toBe('Done talking.')
    await waitFor(async () => (await api(a)('GET', `/runs/${run.body.id}`)).body.status === 'completed', 60_000)
    await waitFor(async () => (await api(a)('GET', `/launch/${launch.body.id}`)).body.status === 'live', 60_000)
    // A survivor made both model calls again: the victim's were cut off by the kill.
    expect((await modelCalls()).map((c) => [c.status, c.claimed_by === victimNode])).toEqual([['done', false], ['done', false]])
    expect(asked('slow chat')).toBeGreaterThanOrEqual(1)
    // Scheduled runs go on on the survivors.
    await waitFor(async () => (await api(a)('GET', `/agents/${scheduled.id}/runs`)).body.runs.length >= runsBefore + 2, 30_000)
    expect((await api(a)('POST', `/agents/${scheduled.id}/stop`)).status).toBe(200)

    // Nothing pending: every launch, turn, run and wallet operation of the account ended.
    await waitFor(async () => {
      const { rows } = await db.query<{ kind: string; status: string }>(`select kind, status from actor where account_id = $1 and kind <> 'agent' and kind <> 'automation'`, [account.accountId])
      return rows.every((r) => FINAL[r.kind]?.includes(r.status))
    }, 30_000)
    // Each transition an effect's outcome caused was journaled once (no effect applied twice).
    const doubled = (await db.query(
      `select actor_id, event->>'effectId' as effect, count(*)::int as n from actor_journal
        where account_id = $1 and event ? 'effectId' group by 1, 2 having count(*) > 1`, [account.accountId])).rows
    expect(doubled).toEqual([])
    // One launch transaction: the worker's nonces on chain are those the outbox confirmed, 0..n-1.
    const nonces = (await db.query<{ nonce: string }>(`select nonce from chain_tx where agent_id = $1 and status = 'confirmed' order by nonce`, [worker.id])).rows.map((r) => Number(r.nonce))
    expect(nonces).toEqual(nonces.map((_, i) => i))
    expect(await createPublicClient({ transport: http(rpcUrl) }).getTransactionCount({ address: worker.walletAddress })).toBe(nonces.length)
    // Each model call billed once; nothing stays reserved; the balance is the ledger's sum.
    // The ledger as GET /billing/transactions reads it: the pending charges folded in first.
    await db.query('select credits_fold(id) from account')
    const { rows: charges } = await db.query(`select ref from credit_entry where account_id = $1 and kind = 'model_usage'`, [account.accountId])
    expect(new Set(charges.map((c) => c.ref)).size).toBe(charges.length)
    const { rows: [acct] } = await db.query(
      `select a.credits, credits_held(a.id) as credits_reserved, (select sum(credits) from credit_entry e where e.account_id = a.id) as ledger from account a where a.id = $1`,
      [account.accountId],
    )
    expect(Number(acct.credits_reserved)).toBe(0)
    expect(Number(acct.credits)).toBe(Number(acct.ledger))
  })
})
