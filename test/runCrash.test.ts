import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { createPublicClient, http } from 'viem'
import { apiClient, type Api } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { adminCreateAccount, kill9, startServer, stopServer, serverCleanup } from './support/server.ts'
import { waitFor } from './support/waitFor.ts'
import { GENERIC_RUN_GOAL } from '../src/domain/runs/startScheduledRun.ts'

const { servers, cleanups } = serverCleanup()
let model: ModelServer
beforeAll(async () => {
  model = await startModelServer()
})
afterAll(() => model?.stop())

async function freshEnv(name: string) {
  const database = await createTestDatabase()
  const dataDir = mkdtempSync(join(tmpdir(), `alts-${name}-`))
  const db = new pg.Pool({ connectionString: database.url, max: 2 })
  cleanups.push(async () => {
    await db.end()
    await database.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  return { db, dataDir, env: { DATABASE_URL: database.url, DATA_DIR: dataDir, OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key' } }
}

describe('kill -9 during a run', () => {
  it('between the model call that asked for a swap and the swap confirmation: the run completes after restart, one swap, each model call billed once', async () => {
    const { db, dataDir, env } = await freshEnv('run-crash')
    // The server kills itself right after broadcasting the swap the model asked for.
    let server = await startServer({ ...env, FAULT_INJECT: 'after_broadcast' })
    servers.push(server)
    const { accountId, apiKey } = await adminCreateAccount(env)
    let api = apiClient(`${server.url}/api/v1`, apiKey)
    const agent = (await api('POST', '/agents', { name: 'runner', skills: ['trading'] })).body
    expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '5' })).status).toBe(200)
    model.mock.on(
      { userMessage: 'swap in a run', hasToolResult: false },
      { toolCalls: [{ id: 'call_run_crash', name: 'swap_execute', arguments: '{"tokenIn":"ETH","tokenOut":"USDC","amountIn":"0.1"}' }], usage: { prompt_tokens: 800, completion_tokens: 30 } },
    )
    model.mock.onToolResult('call_run_crash', { content: 'Swapped 0.1 ETH in the run.', usage: { prompt_tokens: 1000, completion_tokens: 8 } })

    const exited = new Promise<void>((resolve) => server.child.once('exit', () => resolve()))
    const started = await api('POST', `/agents/${agent.id}/runs`, { goal: 'swap in a run' }).catch(() => undefined)
    await exited
    expect(server.child.signalCode).toBe('SIGKILL')
    const { rows: runs } = await db.query(`select id, status from actor where kind = 'run'`)
    expect(runs).toEqual([{ id: expect.any(String), status: 'running' }])
    const runId = runs[0].id as string
    if (started) expect(started.body.id).toBe(runId)

    server = await startServer(env)
    servers.push(server)
    api = apiClient(`${server.url}/api/v1`, apiKey)
    let run: any
    await waitFor(async () => {
      run = (await api('GET', `/runs/${runId}`)).body
      return run.status === 'completed'
    }, 60_000)
    expect(run.steps).toHaveLength(2)
    expect(run.steps[0].toolCalls).toMatchObject([{ id: 'call_run_crash', status: 'ok', result: { status: 'confirmed' } }])
    expect(run.summary).toBe('Swapped 0.1 ETH in the run.')

    // Exactly one swap: one wallet operation, one transaction, the wallet's nonce moved once.
    expect((await db.query(`select id from wallet_op where agent_id = $1`, [agent.id])).rows).toHaveLength(1)
    expect((await db.query(`select status from chain_tx where agent_id = $1`, [agent.id])).rows).toEqual([{ status: 'confirmed' }])
    const { rpcUrl } = JSON.parse(readFileSync(join(dataDir, 'chain', 'anvil.json'), 'utf8'))
    expect(await createPublicClient({ transport: http(rpcUrl) }).getTransactionCount({ address: agent.walletAddress })).toBe(1)

    // Each model call billed once; the balance is the ledger's sum and nothing stays reserved.
    // The ledger as GET /billing/transactions reads it: the pending charges folded in first.
    await db.query('select credits_fold(id) from account')
    const { rows: charges } = await db.query(`select ref, credits from credit_entry where account_id = $1 and kind = 'model_usage'`, [accountId])
    expect(charges).toHaveLength(2)
    expect(new Set(charges.map((c) => c.ref)).size).toBe(2)
    expect(run.credits).toBe(-charges.reduce((s, c) => s + Number(c.credits), 0))
    const { rows: [acct] } = await db.query(
      `select a.credits, credits_held(a.id) as credits_reserved, (select sum(credits) from credit_entry e where e.account_id = a.id) as ledger from account a where a.id = $1`,
      [accountId],
    )
    expect(Number(acct.credits)).toBe(Number(acct.ledger))
    expect(Number(acct.credits_reserved)).toBe(0)
    await stopServer(server)
  })
})

describe('kill -9 of a node with a scheduled agent', () => {
  it('after a downtime of five intervals it runs once, not once per missed interval', async () => {
    const { db, env: base } = await freshEnv('run-schedule-crash')
    const env = { ...base, RUN_MIN_INTERVAL_SECONDS: '1' }
    model.mock.on({ userMessage: GENERIC_RUN_GOAL, hasToolResult: false }, { content: 'Nothing to do.' })
    let server = await startServer(env)
    servers.push(server)
    const { apiKey } = await adminCreateAccount(env)
    let api: Api = apiClient(`${server.url}/api/v1`, apiKey)
    const agent = (await api('POST', '/agents', { name: 'scheduled', run_interval_seconds: 2 })).body.id
    expect((await api('POST', `/agents/${agent}/start`)).status).toBe(200)
    const runCount = async () => (await db.query(`select count(*)::int as n from actor where kind = 'run' and snapshot->'context'->>'agentId' = $1`, [agent])).rows[0].n as number
    await waitFor(async () => (await runCount()) >= 1, 20_000)
    await waitFor(async () => (await db.query(`select 1 from actor where kind = 'run' and status = 'running'`)).rows.length === 0, 20_000)

    await kill9(server)
    const before = await runCount()
    // Down until the agent's one durable timer is 10 seconds (five run intervals) overdue.
    await waitFor(async () => (await db.query(`select 1 from actor_timer where actor_id = $1 and due_at < now() - interval '10 seconds'`, [agent])).rows.length === 1, 30_000)

    server = await startServer(env)
    servers.push(server)
    api = apiClient(`${server.url}/api/v1`, apiKey)
    await waitFor(async () => (await runCount()) >= before + 2, 30_000)
    const { rows } = await db.query<{ at: Date | string }>(
      `select created_at as at from actor where kind = 'run' and snapshot->'context'->>'agentId' = $1 order by created_at`,
      [agent],
    )
    const after = rows.slice(before).map((r) => Date.parse(new Date(r.at).toISOString()))
    // One catch-up run, then the interval again, to the second: no burst of the missed intervals.
    expect(after[1]! - after[0]!).toBeGreaterThanOrEqual(1750)
    expect(after[1]! - after[0]!).toBeLessThan(3000)
    expect((await api('POST', `/agents/${agent}/stop`)).status).toBe(200)
    await stopServer(server)
  })
})
