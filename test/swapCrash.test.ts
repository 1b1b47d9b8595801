import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import pg from 'pg'
import { createPublicClient, erc20Abi, http, parseUnits } from 'viem'
import { apiClient } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { adminCreateAccount, startServer, stopServer, serverCleanup } from './support/server.ts'

const { servers, cleanups } = serverCleanup()

describe.each(['after_store', 'after_broadcast'] as const)('kill -9 at %s during a swap', (point) => {
  it('restarts into exactly one swap transaction on chain and a confirmed operation', async () => {
    const database = await createTestDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), `alts-swap-crash-${point}-`))
    const db = new pg.Pool({ connectionString: database.url, max: 2 })
    cleanups.push(async () => {
      await db.end()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
    })
    const env = { DATABASE_URL: database.url, DATA_DIR: dataDir }
    let server = await startServer({ ...env, FAULT_INJECT: point })
    servers.push(server)
    const { apiKey } = await adminCreateAccount(env)
    let api = apiClient(`${server.url}/api/v1`, apiKey)
    const agent = (await api('POST', '/agents', { name: 'crashy', model: 'gpt-4o-mini', skills: [] })).body
    expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '5' })).status).toBe(200)
    const body = { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1', slippageBps: 100 }
    const exited = new Promise<void>((resolve) => server.child.once('exit', () => resolve()))
    // The server kills itself inside the swap's send, so this request never gets an answer.
    await expect(api('POST', '/swap/execute', body, { 'idempotency-key': 'crash-swap' })).rejects.toThrow()
    await exited
    expect(server.child.signalCode).toBe('SIGKILL')

    server = await startServer(env)
    servers.push(server)
    api = apiClient(`${server.url}/api/v1`, apiKey)
    const { rows: ops } = await db.query(`select id from wallet_op where agent_id = $1 and kind = 'swap'`, [agent.id])
    expect(ops).toHaveLength(1)
    let swap: any
    for (const until = Date.now() + 30_000; Date.now() < until; ) {
      swap = (await api('GET', `/swap/${ops[0].id}`)).body
      if (swap.status === 'confirmed' || swap.status === 'failed') break
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(swap).toMatchObject({ status: 'confirmed', amountIn: '0.1', error: null })
    const { rows } = await db.query(`select status, nonce, kind from chain_tx where agent_id = $1`, [agent.id])
    expect(rows).toEqual([{ status: 'confirmed', nonce: '0', kind: 'swap' }])
    const { rpcUrl } = JSON.parse(readFileSync(join(dataDir, 'chain', 'anvil.json'), 'utf8'))
    const manifest = JSON.parse(readFileSync(join(dataDir, 'chain', 'manifest.json'), 'utf8'))
    const client = createPublicClient({ transport: http(rpcUrl) })
    expect(await client.getTransactionCount({ address: agent.walletAddress })).toBe(1)
    const usdc = await client.readContract({ address: manifest.contracts.usdc, abi: erc20Abi, functionName: 'balanceOf', args: [agent.walletAddress] })
    expect(usdc).toBe(parseUnits(swap.amountOut, 6))
    expect(usdc).toBeGreaterThanOrEqual(parseUnits(swap.minAmountOut, 6))
    // The key's first request died with its node: a retry takes the key over and finds that swap, never runs it twice.
    const retry = await api('POST', '/swap/execute', body, { 'idempotency-key': 'crash-swap' })
    expect([retry.status, retry.body.id, retry.body.status]).toEqual([200, ops[0].id, 'confirmed'])
    expect(await client.getTransactionCount({ address: agent.walletAddress })).toBe(1)
    await stopServer(server)
  })
})
