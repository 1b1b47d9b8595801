/**
 * Protective orders at scale (issue 33): 1,000 armed stop-losses and trailing stops over 100
 * launched tokens (10 orders a token, half of each kind, on 10 running agents), the service in
 * this process on the embedded chain (test/support/app.ts). Measured side by side in one run:
 *
 * - the time the indexer's passes take per block and the trigger feed's evaluation after each
 *   (from the pass's end until the feed's durable checkpoint reaches the block: one stop-loss
 *   read of every armed price threshold's token and one of the trailing stops' and brackets',
 *   the prices of their tokens at the block, and the events for those it concerns), first with
 *   no orders, then with the 1,000 armed. Each sample block is one small buy of a random one of
 *   the 100 tokens (which raises its price: a new high for its trailing stops). The indexer's
 *   own loop is stopped while sampling; each pass is run by `syncOnce`.
 * - the delay from the block that crosses the level of 10 more stop-losses (on one token held by
 *   another agent) to each firing's swap being started (its `wallet_op` row, written as the swap
 *   is reserved, just before it is signed and sent), with the indexer following the chain.
 *
 *   npm run -s bench:orders   (BENCH_ORDERS_SAMPLES: blocks sampled per side, default 40)
 */
import { parseEther, type Address, type Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { cpus, tmpdir } from 'node:os'
import { mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { once } from 'node:events'
import { apiClient, type Api } from '../test/support/app.ts'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/logger.ts'
import { createServices } from '../src/app/services.ts'
import { createApp } from '../src/http/app.ts'
import { createHttpServer } from '../src/http/server.ts'
import { AmmRouterArtifact, InstantPoolLauncherArtifact, MockUSDCArtifact } from '../src/dev/artifacts/index.ts'
import { walletClientFor } from '../src/adapters/chain/chain.ts'
import { VENUE_B_STARTING_MARKET_CAP } from '../src/adapters/chain/launchTx.ts'
import { createDatabase, dropAllDatabases, percentile, round, sleep } from './lib.ts'

const TOKENS = 100
const AGENTS = 10
const SAMPLES = Number(process.env.BENCH_ORDERS_SAMPLES ?? 40)
const FIRING = 10
const progress = (m: string) => process.stderr.write(`[orders] ${new Date().toISOString().slice(11, 19)} ${m}\n`)

async function inParallel<T>(n: number, items: readonly T[], job: (x: T, i: number) => Promise<void>) {
  let next = 0
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) {
      const i = next++
      await job(items[i]!, i)
    }
  }))
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return { p50: round(percentile(s, 50), 1), p99: round(percentile(s, 99), 1), max: round(s.at(-1) ?? NaN, 1) }
}

/** The service in this process on its own database and the embedded chain, listening on a free port (as test/support/app.ts). */
async function startService() {
  const url = await createDatabase(`bench_orders_${Date.now()}`)
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-orders-'))
  const config = loadConfig({
    DATABASE_URL: url, DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', RATE_LIMIT_PER_KEY: '100000000', RATE_LIMIT_PER_IP: '100000000',
    STARTER_CREDITS: '1000000000', OPENAI_API_KEY: 'bench', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
  })
  const services = await createServices(config, createLogger({ level: config.logLevel }), { runtimePollMs: 100, withChain: true })
  await services.start()
  const server = createHttpServer(createApp(services), { logger: services.logger }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  const addr = server.address()
  const base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`
  return {
    services,
    async account() {
      const { apiKey } = await services.core.createAccount({ name: 'bench', isOperator: false })
      return { api: apiClient(`${base}/api/v1`, apiKey) }
    },
    async close() {
      server.closeAllConnections()
      server.close()
      await services.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

async function main() {
  const t0 = performance.now()
  const app = await startService()
  const chain = app.services.chain!
  const pool = app.services.pool
  const q = async <R = any>(sql: string, values: unknown[] = []) => (await pool.query(sql, values)).rows as R[]
  try {
    const { api } = await app.account()
    const key = generatePrivateKey()
    const whale = walletClientFor(chain, key)
    const me = privateKeyToAccount(key).address
    await chain.publicClient.request({ method: 'anvil_setBalance' as never, params: [me, '0x' + (10n ** 24n).toString(16)] as never })
    const send = async (p: Parameters<typeof whale.writeContract>[0]) => {
      const hash: Hex = await whale.writeContract(p)
      const r = await chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 10 })
      if (r.status !== 'success') throw new Error(`tx ${hash} reverted`)
      return r
    }
    const { router, venueB, weth } = chain.manifest.contracts
    const buy = (token: Address, eth: string) => send({
      chain: chain.chain, account: whale.account!, address: router, abi: AmmRouterArtifact.abi, functionName: 'swapExactETHForTokens',
      args: [0n, [weth, token], me, 2n ** 40n], value: parseEther(eth),
    } as never)

    progress(`launching ${TOKENS} tokens on venue-b`)
    const cap = parseEther(VENUE_B_STARTING_MARKET_CAP.ETH!)
    for (let i = 0; i < TOKENS; i++) {
      await send({ chain: chain.chain, account: whale.account!, address: venueB, abi: InstantPoolLauncherArtifact.abi, functionName: 'launch', args: [`Bench ${i}`, `BO${i}`, weth, cap] })
    }
    for (;;) {
      const [row] = await q<{ n: number }>(`select count(*)::int as n from token where symbol like 'BO%'`)
      if ((row?.n ?? 0) >= TOKENS) break
      await sleep(100)
    }
    const tokens = (await q<{ address: Address }>(`select address from token where symbol like 'BO%' order by block_number`)).map((r) => r.address)
    const indexer = app.services.indexer!
    const checkpoint = async () => Number((await q<{ b: string }>(`select block_number as b from automation_trigger_checkpoint`))[0]?.b ?? -1)

    /** One sample block: a small buy of a random token, then the indexer's pass and the trigger feed's evaluation, timed. */
    async function sample(i: number) {
      const r = await buy(tokens[(i * 37) % TOKENS]!, '0.001')
      const block = Number(r.blockNumber)
      const a = performance.now()
      await indexer.syncOnce()
      const b = performance.now()
      while ((await checkpoint()) < block) await sleep(0)
      return { passMs: b - a, feedMs: performance.now() - b }
    }
    async function side(label: string) {
      await indexer.stop()
      for (let i = 0; i < 3; i++) await sample(i) // warm-up
      const out: Array<{ passMs: number; feedMs: number }> = []
      for (let i = 0; i < SAMPLES; i++) out.push(await sample(i + 3))
      indexer.start()
      progress(`${label}: feed p50 ${stats(out.map((s) => s.feedMs)).p50} ms`)
      return out
    }
    progress(`sampling ${SAMPLES} blocks without orders`)
    const without = await side('without orders')

    progress(`creating ${AGENTS} agents and ${AGENTS * TOKENS} orders`)
    const newAgent = async (a: Api, name: string) => {
      const id = (await a('POST', '/agents', { name, skills: ['trading'], policy: { max_trade_usd: '1000000', max_daily_usd: '100000000', max_price_impact_bps: 5000 } })).body.id as string
      if ((await a('POST', '/dev/faucet', { agentId: id, eth: '2' })).status !== 200) throw new Error('faucet')
      if ((await a('POST', `/agents/${id}/start`)).status !== 200) throw new Error('start')
      return id
    }
    const agents: string[] = []
    for (let a = 0; a < AGENTS; a++) agents.push(await newAgent(api, `holder-${a}`))
    const price = new Map<string, number>()
    for (let i = 0; i < TOKENS; i += 50) {
      const r = await api('GET', `/price?tokens=${tokens.slice(i, i + 50).join(',')}`)
      for (const p of r.body.prices as Array<{ token?: string; address?: string; priceUsd: string }>) price.set((p.address ?? p.token ?? '').toLowerCase(), Number(p.priceUsd))
    }
    const orders = agents.flatMap((agentId, a) => tokens.map((token, t) => ({ agentId, token, stop: (a + t) % 2 === 0 })))
    const c0 = performance.now()
    await inParallel(8, orders, async (o, i) => {
      const level = price.get(o.token.toLowerCase())
      const body = o.stop
        ? { agent_id: o.agentId, name: `sl-${i}`, kind: 'stop_loss', stop_loss: { token: o.token, priceUsd: (level! * 0.5).toPrecision(8), acknowledgeUnverified: true } }
        : { agent_id: o.agentId, name: `ts-${i}`, kind: 'trailing_stop', trailing_stop: { token: o.token, trailPct: 50, acknowledgeUnverified: true } }
      const r = await api('POST', '/automations', body)
      if (r.status !== 201) throw new Error(`POST /automations ${r.status}: ${JSON.stringify(r.body)}`)
    })
    const createS = (performance.now() - c0) / 1000
    progress(`created in ${round(createS, 1)} s; sampling ${SAMPLES} blocks with them armed`)
    const withOrders = await side('with 1,000 orders')

    // The firing delay: 10 stop-losses on one token (held by another agent), crossed by one block.
    const x = tokens[0]!
    await buy(x, '1')
    const holder = await newAgent(api, 'firing-holder')
    const bought = await api('POST', '/swap/execute', { agentId: holder, tokenIn: 'ETH', tokenOut: x, amountIn: '0.2', slippageBps: 5000, acknowledgeUnverified: true })
    if (bought.body.status !== 'confirmed') throw new Error(`holder buy: ${JSON.stringify(bought.body)}`)
    const now = Number((await api('GET', `/price?tokens=${x}`)).body.prices[0].priceUsd)
    const firing: string[] = []
    for (let i = 0; i < FIRING; i++) {
      const r = await api('POST', '/automations', { agent_id: holder, name: `fire-${i}`, kind: 'stop_loss', stop_loss: { token: x, priceUsd: (now * 0.9).toPrecision(8), share: 0.1, acknowledgeUnverified: true } })
      if (r.status !== 201) throw new Error(`POST /automations ${r.status}: ${JSON.stringify(r.body)}`)
      firing.push(r.body.id)
    }
    const held = await chain.publicClient.readContract({ address: x, abi: MockUSDCArtifact.abi, functionName: 'balanceOf', args: [me] }) as bigint
    await send({ chain: chain.chain, account: whale.account!, address: x, abi: MockUSDCArtifact.abi, functionName: 'approve', args: [router, held] })
    const crossing = await send({
      chain: chain.chain, account: whale.account!, address: router, abi: AmmRouterArtifact.abi, functionName: 'swapExactTokensForETH',
      args: [held, 0n, [x, weth], me, 2n ** 40n],
    })
    const crossedAt = Date.now()
    const crossingBlock = Number(crossing.blockNumber)
    const deadline = Date.now() + 60_000
    let started: Array<{ ms: number }> = []
    while (Date.now() < deadline) {
      started = await q<{ ms: number }>(`select extract(epoch from created_at)::float8 * 1000 - $2::float8 as ms from wallet_op where parent_id = any($1::text[]) order by created_at`, [firing, crossedAt])
      if (started.length >= FIRING) break
      await sleep(20)
    }
    const delays = started.map((r) => r.ms)
    const result = {
      machine: { cores: cpus().length, node: process.version },
      orders: orders.length, tokens: TOKENS, agents: AGENTS, samplesPerSide: SAMPLES, createSeconds: round(createS, 1),
      withoutOrders: { passMs: stats(without.map((s) => s.passMs)), feedMs: stats(without.map((s) => s.feedMs)) },
      withOrders: { passMs: stats(withOrders.map((s) => s.passMs)), feedMs: stats(withOrders.map((s) => s.feedMs)) },
      addedFeedMs: { p50: round(stats(withOrders.map((s) => s.feedMs)).p50 - stats(without.map((s) => s.feedMs)).p50, 1), p99: round(stats(withOrders.map((s) => s.feedMs)).p99 - stats(without.map((s) => s.feedMs)).p99, 1) },
      firing: { crossingBlock, swapsStarted: delays.length, crossingToSwapStartedMs: { first: round(delays[0] ?? NaN, 0), ...stats(delays) } },
      totalSeconds: round((performance.now() - t0) / 1000, 1),
    }
    const out = process.stdout
    out.write(`\n${orders.length} armed stop-losses and trailing stops over ${TOKENS} tokens (${AGENTS} agents); ${cpus().length} cores, Node ${process.version}\n\n`)
    out.write('| per block | indexer pass p50 / p99 | trigger feed p50 / p99 / max |\n|---|---|---|\n')
    out.write(`| no orders | ${result.withoutOrders.passMs.p50} / ${result.withoutOrders.passMs.p99} ms | ${result.withoutOrders.feedMs.p50} / ${result.withoutOrders.feedMs.p99} / ${result.withoutOrders.feedMs.max} ms |\n`)
    out.write(`| 1,000 armed | ${result.withOrders.passMs.p50} / ${result.withOrders.passMs.p99} ms | ${result.withOrders.feedMs.p50} / ${result.withOrders.feedMs.p99} / ${result.withOrders.feedMs.max} ms |\n\n`)
    out.write(`crossing block -> swap started (${delays.length} of ${FIRING} stop-losses): first ${result.firing.crossingToSwapStartedMs.first} ms, p50 ${result.firing.crossingToSwapStartedMs.p50} ms, max ${result.firing.crossingToSwapStartedMs.max} ms\n`)
    out.write(`${JSON.stringify(result)}\n`)
  } finally {
    await app.close()
  }
}

main()
  .catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
    process.exitCode = 1
  })
  .finally(async () => {
    await dropAllDatabases()
  })
