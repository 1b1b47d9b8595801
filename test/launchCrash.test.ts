import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import pg from 'pg'
import { createPublicClient, http } from 'viem'
import { apiClient } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { adminCreateAccount, startServer, stopServer, serverCleanup } from './support/server.ts'
import { BondingCurveLaunchpadArtifact } from '../src/dev/artifacts/index.ts'

const { servers, cleanups } = serverCleanup()

/** The embedded anvil's RPC, as the server records it under its data directory. */
function anvilRpc(dataDir: string): string {
  return JSON.parse(readFileSync(join(dataDir, 'chain', 'anvil.json'), 'utf8')).rpcUrl
}

// The three recovery points run side by side: each has its own server, chain and database.
describe.concurrent('kill -9 during a launch', () => {
  it.each(['before_sign', 'after_store', 'after_broadcast'] as const)('at %s: restarts into exactly one deployment transaction and a live launch', { timeout: 180_000 }, async (point) => {
    const database = await createTestDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), `alts-launch-crash-${point}-`))
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
    const request = () => api('POST', '/launch/venue-a', { agentId: agent.id, symbol: 'BOOM', name: 'Boom', quote: 'ETH' }, { 'idempotency-key': 'crash-1' })
    // The 202 races the submit effect, which may reach the kill point before the answer is
    // written: then the connection closes unanswered, and the retry below names the launch.
    const first = await request().catch(() => undefined)
    if (first) expect(first.status).toBe(202)
    // The server kills itself at the recovery point while running the launch's submit effect.
    await new Promise<void>((resolve) => (server.child.exitCode !== null || server.child.signalCode !== null ? resolve() : server.child.once('exit', () => resolve())))
    expect(server.child.signalCode).toBe('SIGKILL')

    server = await startServer(env)
    servers.push(server)
    api = apiClient(`${server.url}/api/v1`, apiKey)
    // A retry with the same key after the crash answers the launch the first request made.
    const launch = await request()
    expect([200, 202]).toContain(launch.status)
    if (first) expect(launch.body.id).toBe(first.body.id)
    const until = Date.now() + 30_000
    let status = ''
    let body: any
    while (Date.now() < until) {
      body = (await api('GET', `/launch/${launch.body.id}`)).body
      status = body.status
      if (status === 'live' || status === 'failed') break
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(status).toBe('live')
    const { rows } = await db.query(`select id, status, nonce from chain_tx where agent_id = $1`, [agent.id])
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ status: 'confirmed', nonce: '0' })
    const client = createPublicClient({ transport: http(anvilRpc(dataDir)) })
    expect(await client.getTransactionCount({ address: agent.walletAddress })).toBe(1)
    const manifest = JSON.parse(readFileSync(join(dataDir, 'chain', 'manifest.json'), 'utf8'))
    const tokens = await client.readContract({ address: manifest.contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi, functionName: 'allTokensLength' })
    expect(tokens).toBe(1n)
    // Replaying the request once more returns the same launch, not a second one.
    const replay = await request()
    expect(replay.body.id).toBe(launch.body.id)
    await stopServer(server)
  })
})
