import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { createPublicClient, http, parseEther, toHex } from 'viem'
import { startAnvil, type AnvilInstance } from '../src/dev/anvil.ts'
import { EMBEDDED_DEPLOYER_KEY } from '../src/adapters/chain/chain.ts'
import { apiClient } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { adminCreateAccount, startServer, stopServer, type ServerProcess } from './support/server.ts'

const run = promisify(execFile)
let anvil: AnvilInstance | undefined
let server: ServerProcess | undefined
const cleanups: Array<() => Promise<void> | void> = []
afterAll(async () => {
  if (server) await stopServer(server).catch(() => {})
  await anvil?.stop()
  for (const c of cleanups) await c()
})

describe('an external chain (CHAIN_RPC_URL + deployment manifest)', () => {
  it('deploys with the admin CLI, then serves launches without starting anything embedded', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alts-external-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    anvil = await startAnvil({ cachePath: join(dir, 'anvil-cache') })
    const manifest = join(dir, 'manifest.json')
    const { stdout } = await run(process.execPath, ['scripts/admin.ts', 'deploy-contracts', '--rpc-url', anvil.rpcUrl, '--out', manifest], {
      env: { ...process.env, DEPLOYER_PRIVATE_KEY: EMBEDDED_DEPLOYER_KEY },
    })
    const deployed = JSON.parse(stdout.trim())
    expect(deployed).toMatchObject({ manifest, chainId: 31337, contracts: { venueA: expect.stringMatching(/^0x/) } })
    expect(existsSync(manifest)).toBe(true)

    const database = await createTestDatabase()
    cleanups.push(() => database.drop())
    const dataDir = join(dir, 'data')
    const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, CHAIN_RPC_URL: anvil.rpcUrl, DEPLOYMENT_MANIFEST: manifest }
    server = await startServer(env)
    const { apiKey } = await adminCreateAccount(env)
    const api = apiClient(`${server.url}/api/v1`, apiKey)
    const health = await api('GET', '/health')
    expect(health.body.rpc).toMatchObject({ configured: true, ok: true, chainId: 31337 })
    expect(health.body.venues.addresses['venue-a'].toLowerCase()).toBe(deployed.contracts.venueA.toLowerCase())
    expect(existsSync(join(dataDir, 'chain'))).toBe(false) // no embedded anvil

    const agent = (await api('POST', '/agents', { name: 'ext', model: 'gpt-4o-mini', skills: [] })).body
    expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '1' })).status).toBe(404)
    const client = createPublicClient({ transport: http(anvil.rpcUrl) })
    await client.request({ method: 'anvil_setBalance' as never, params: [agent.walletAddress, toHex(parseEther('5'))] as never })
    const launch = await api('POST', '/launch/venue-b', { agentId: agent.id, symbol: 'EXT', name: 'External', quote: 'ETH' }, { 'idempotency-key': 'ext-1' })
    expect(launch.status).toBe(202)
    const until = Date.now() + 20_000
    let status = ''
    while (Date.now() < until && status !== 'live' && status !== 'failed') {
      status = (await api('GET', `/launch/${launch.body.id}`)).body.status
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(status).toBe('live')

    // The same chain named by its WebSocket URL: reads go over one socket, launches still land.
    await stopServer(server)
    server = await startServer({ ...env, CHAIN_RPC_URL: anvil.rpcUrl.replace(/^http/, 'ws') })
    const wsApi = apiClient(`${server.url}/api/v1`, apiKey)
    expect((await wsApi('GET', '/health')).body.rpc).toMatchObject({ configured: true, ok: true, chainId: 31337 })
    const second = await wsApi('POST', '/launch/venue-b', { agentId: agent.id, symbol: 'EXTWS', name: 'External WS', quote: 'ETH' }, { 'idempotency-key': 'ext-2' })
    expect(second.status).toBe(202)
    let wsStatus = ''
    for (const until = Date.now() + 20_000; Date.now() < until && wsStatus !== 'live' && wsStatus !== 'failed'; ) {
      wsStatus = (await wsApi('GET', `/launch/${second.body.id}`)).body.status
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(wsStatus).toBe('live')
  })
})
