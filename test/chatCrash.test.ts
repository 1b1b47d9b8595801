import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { createPublicClient, http } from 'viem'
import { apiClient } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { adminCreateAccount, startServer, stopServer, serverCleanup } from './support/server.ts'
import { waitFor } from './support/waitFor.ts'

const { servers, cleanups } = serverCleanup()
let model: ModelServer
beforeAll(async () => {
  model = await startModelServer()
})
afterAll(() => model?.stop())

describe('kill -9 during a chat turn, after the model asked for a swap', () => {
  it('restarts into a completed turn, exactly one swap sent and each model call billed once', async () => {
    const database = await createTestDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), 'alts-chat-crash-'))
    const db = new pg.Pool({ connectionString: database.url, max: 2 })
    cleanups.push(async () => {
      await db.end()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
    })
    const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key' }
    // The server kills itself right after broadcasting the swap the model asked for.
    let server = await startServer({ ...env, FAULT_INJECT: 'after_broadcast' })
    servers.push(server)
    const { accountId, apiKey } = await adminCreateAccount(env)
    let api = apiClient(`${server.url}/api/v1`, apiKey)
    const agent = (await api('POST', '/agents', { name: 'chatty', skills: ['trading'] })).body
    expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '5' })).status).toBe(200)
    model.mock.on(
      { userMessage: 'swap now', hasToolResult: false },
      { toolCalls: [{ id: 'call_crash', name: 'swap_execute', arguments: '{"tokenIn":"ETH","tokenOut":"USDC","amountIn":"0.1"}' }], usage: { prompt_tokens: 800, completion_tokens: 30 } },
    )
    model.mock.onToolResult('call_crash', { content: 'Swapped 0.1 ETH.', usage: { prompt_tokens: 1000, completion_tokens: 8 } })

    const exited = new Promise<void>((resolve) => server.child.once('exit', () => resolve()))
    await expect(api('POST', `/agents/${agent.id}/chat`, { message: 'swap now' })).rejects.toThrow()
    await exited
    expect(server.child.signalCode).toBe('SIGKILL')
    const { rows: turns } = await db.query(`select id, status from actor where kind = 'chatturn'`)
    expect(turns).toEqual([{ id: expect.any(String), status: 'acting' }])
    const turnId = turns[0].id as string

    server = await startServer(env)
    servers.push(server)
    api = apiClient(`${server.url}/api/v1`, apiKey)
    let turn: any
    await waitFor(async () => {
      turn = await api('GET', `/agents/${agent.id}/chat/${turnId}`)
      return turn.status === 200
    }, 60_000)
    expect(turn.body).toMatchObject({ id: turnId, status: 'completed', content: 'Swapped 0.1 ETH.', toolCalls: [{ id: 'call_crash', status: 'ok', result: { status: 'confirmed' } }] })

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
    expect(turn.body.credits).toBe(-charges.reduce((s, c) => s + Number(c.credits), 0))
    const { rows: [acct] } = await db.query(
      `select a.credits, credits_held(a.id) as credits_reserved, (select sum(credits) from credit_entry e where e.account_id = a.id) as ledger from account a where a.id = $1`,
      [accountId],
    )
    expect(Number(acct.credits)).toBe(Number(acct.ledger))
    expect(Number(acct.credits_reserved)).toBe(0)
    // The messages were written once each: user, assistant (with the tool call), tool, assistant.
    const { rows: messages } = await db.query(`select role from chat_message where turn_id = $1 order by created_at`, [turnId])
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant'])
    await stopServer(server)
  })
})
