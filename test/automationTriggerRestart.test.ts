import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import pg from 'pg'
import { createPublicClient, createWalletClient, http, parseEther, toHex, type Address, type PublicClient } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { startAnvil } from '../src/dev/anvil.ts'
import { BondingCurveLaunchpadArtifact } from '../src/dev/artifacts/index.ts'
import { EMBEDDED_DEPLOYER_KEY } from '../src/adapters/chain/chain.ts'
import { planLaunch } from '../src/adapters/chain/launchTx.ts'
import { readManifest } from '../src/adapters/chain/manifest.ts'
import { apiClient, type Api } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { adminCreateAccount, serverCleanup, startServer, stopServer } from './support/server.ts'

/**
 * The automations' trigger feed loses no block to downtime: a launch mined while the service is
 * stopped is seen by the first indexer pass after the restart, and a matching sniper buys it
 * once; a limit order whose price was crossed meanwhile fires then too. A real server as a child process, on a chain of the test's own (CHAIN_RPC_URL: a chain
 * that outlives the service and keeps the state of past blocks, as a real node does).
 */
const run = promisify(execFile)
const { servers, cleanups } = serverCleanup()
/** anvil's second dev account: launches from a wallet the service does not manage. */
const OUTSIDER_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'

async function until(api: Api, id: string, done: (a: any) => boolean, timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs
  for (;;) {
    const a = (await api('GET', `/automations/${id}`)).body
    if (done(a)) return a
    if (Date.now() > end) throw new Error(`automation not there in time: ${JSON.stringify(a)}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

describe('price and launch triggers across downtime', () => {
  it('a sniper buys, once, a matching launch mined while the service was stopped; a limit order crossed meanwhile fires', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alts-sniper-restart-'))
    const anvil = await startAnvil({ cachePath: join(dir, 'anvil-cache') })
    const database = await createTestDatabase()
    const db = new pg.Pool({ connectionString: database.url, max: 2 })
    cleanups.push(async () => {
      await anvil.stop()
      await db.end()
      await database.drop()
      rmSync(dir, { recursive: true, force: true })
    })
    const manifestPath = join(dir, 'manifest.json')
    await run(process.execPath, ['scripts/admin.ts', 'deploy-contracts', '--rpc-url', anvil.rpcUrl, '--out', manifestPath], { env: { ...process.env, DEPLOYER_PRIVATE_KEY: EMBEDDED_DEPLOYER_KEY } })
    const manifest = await readManifest(manifestPath)
    const chain = createPublicClient({ transport: http(anvil.rpcUrl) }) as PublicClient
    const env = { DATABASE_URL: database.url, DATA_DIR: join(dir, 'data'), CHAIN_RPC_URL: anvil.rpcUrl.replace(/^http/, 'ws'), DEPLOYMENT_MANIFEST: manifestPath, AUTOMATION_MIN_INTERVAL_SECONDS: '1' }

    let server = await startServer(env)
    servers.push(server)
    const { apiKey } = await adminCreateAccount(env)
    let api = apiClient(`${server.url}/api/v1`, apiKey)
    const agent = (await api('POST', '/agents', { name: 'sniper', skills: ['trading'] })).body
    await chain.request({ method: 'anvil_setBalance' as never, params: [agent.walletAddress, toHex(parseEther('5'))] as never })
    expect((await api('POST', `/agents/${agent.id}/start`)).status).toBe(200)
    const account = privateKeyToAccount(OUTSIDER_KEY)
    const wallet = createWalletClient({ account, transport: http(anvil.rpcUrl) })
    const launchOnChain = async (symbol: string) => {
      const nonce = await chain.getTransactionCount({ address: account.address })
      const [tx] = planLaunch(manifest, { venue: 'venue-a', symbol, name: symbol, quote: 'ETH', seedAmount: null }, account.address, nonce)
      const receipt = await chain.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ chain: null, to: tx!.to, data: tx!.data, nonce }) })
      expect(receipt.status).toBe('success')
      return Number(receipt.blockNumber)
    }
    // A limit order on a token launched (and indexed) before the outage, 5 % above its price.
    await launchOnChain('LIMITCAT')
    let limitToken: Address | undefined
    for (const end = Date.now() + 20_000; !limitToken && Date.now() < end; await new Promise((r) => setTimeout(r, 200))) {
      limitToken = (await db.query(`select address from token where symbol = 'LIMITCAT'`)).rows[0]?.address
    }
    const [price] = (await api('GET', `/price?tokens=${limitToken}`)).body.prices
    const limit = await api('POST', '/automations', {
      agent_id: agent.id, name: 'breakout', kind: 'limit',
      limit: { tokenIn: 'ETH', tokenOut: limitToken, mint: limitToken, amountIn: '0.01', operator: 'gte', priceUsd: (Number(price.priceUsd) * 1.05).toPrecision(6), slippageBps: 500, acknowledgeUnverified: true },
    })
    expect(limit.status, JSON.stringify(limit.body)).toBe(201)
    const created = await api('POST', '/automations', {
      agent_id: agent.id, name: 'downtime sniper', kind: 'sniper',
      sniper: { quote: 'ETH', amountIn: '0.01', maxBuys: 2, venue: 'venue-a', symbolPattern: 'DOWN*', slippageBps: 2000 },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    await stopServer(server)

    // While the service is stopped: a matching launch, one that does not match, and a buy that
    // takes the limit order's token over its threshold.
    const launched = [await launchOnChain('DOWNCAT'), await launchOnChain('UPCAT')]
    await chain.waitForTransactionReceipt({
      hash: await wallet.writeContract({
        chain: null, address: manifest.contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi,
        functionName: 'buy', args: [limitToken!, parseEther('0.2'), 0n, account.address], value: parseEther('0.2'),
      }),
    })

    server = await startServer(env)
    servers.push(server)
    api = apiClient(`${server.url}/api/v1`, apiKey)
    const a = await until(api, created.body.id, (x) => x.runCount >= 1)
    expect(a.firings).toMatchObject([{ number: 1, source: 'launch', outcome: 'ok', txHash: expect.any(String) }])
    const [{ address }] = (await db.query(`select address from token where symbol = 'DOWNCAT' and block_number = $1`, [launched[0]])).rows
    // Later passes (a backstop pass comes within 5 s) buy nothing more.
    await new Promise((r) => setTimeout(r, 6_000))
    const bought = await db.query(`select x.snapshot->'context'->'params'->>'tokenOut' as token from wallet_op w join actor x on x.id = w.id where w.parent_id = $1`, [created.body.id])
    expect(bought.rows.map((b) => b.token)).toEqual([address.toLowerCase()])
    expect((await api('GET', `/automations/${created.body.id}`)).body).toMatchObject({ runCount: 1, status: 'armed' })
    const filled = await until(api, limit.body.id, (x) => x.status === 'completed')
    expect(filled).toMatchObject({ runCount: 1, completedReason: 'fired_once', firings: [{ number: 1, source: 'price', outcome: 'ok' }] })
    await stopServer(server)
  })
})
