/**
 * Market intelligence at scale: the real service (child process, embedded anvil) over a database
 * seeded with generate_series as the indexer writes it: TOKENS launched tokens (USDC-quoted, with
 * pools), SWAPS trades spread over the last 24 h with a snapshot each. Measures, one request in
 * flight over keep-alive:
 *   - GET /indicators?mint=<a random token>&indicators=rsi,ema,sma,macd&timeframe=15m
 *   - GET /signals/top-movers?timeframe=24h (the board is shared for 2 s and refreshed in the
 *     background after that: `topMoversAfterExpiry` is a request 2.1 s after the previous one),
 *     and the whole-board read itself (`moversBoardRead`, the store call the refresh makes)
 *   - the indexer's added cost per block: writeAnomalies (the step this feature added to the
 *     range transaction) for a block of BLOCK_SWAPS swaps over BLOCK_SWAPS tokens, in a rolled
 *     back transaction; before the feature the step did not exist (0 ms). The other addition, one
 *     eth_call per block with ETH-quoted trades (the WETH/USDC reserves), is timed against anvil.
 * Run: `npm run -s bench:intel` (Postgres at 127.0.0.1:5432 with trust, or DATABASE_URL).
 */
import pg from 'pg'
import { withService } from './serviceFixture.ts'
import { percentile } from './lib.ts'
import { seed } from './intelSeed.ts'
import { createMarketIntelStore } from '../src/adapters/db/marketIntel.store.ts'
import { writeAnomalies } from '../src/adapters/chain/indexer/anomalies.ts'
import type { IndexerContext } from '../src/adapters/chain/indexer/indexerContext.ts'
import type { TradeRow } from '../src/adapters/chain/indexer/indexedRows.ts'

const TOKENS = Number(process.env.BENCH_INTEL_TOKENS ?? 1000)
const SWAPS = Number(process.env.BENCH_INTEL_SWAPS ?? 100_000)
const REQUESTS = Number(process.env.BENCH_INTEL_REQUESTS ?? 1000)
const COLD = Number(process.env.BENCH_INTEL_COLD ?? 15)
const BLOCK_SWAPS = Number(process.env.BENCH_INTEL_BLOCK_SWAPS ?? 20)

async function timed(n: number, fn: (i: number) => Promise<void>) {
  const ms: number[] = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await fn(i)
    ms.push(performance.now() - t)
  }
  ms.sort((a, b) => a - b)
  return { n, p50: +percentile(ms, 50).toFixed(2), p99: +percentile(ms, 99).toFixed(2), max: +ms.at(-1)!.toFixed(2) }
}

async function get(url: string) {
  const res = await fetch(url)
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`)
  await res.arrayBuffer()
}

/** writeAnomalies for one block of BLOCK_SWAPS swaps, inside a transaction that is rolled back. */
async function anomalyStep(pool: pg.Pool, chainId: number) {
  const ctx = { chainId, quoteSymbols: new Map([['0x' + '1'.padStart(40, '0'), 'USDC']]), quoteDecimals: new Map([['USDC', 6]]) } as unknown as IndexerContext
  const block = 3_000_000
  return timed(200, async (i) => {
    const trades: TradeRow[] = Array.from({ length: BLOCK_SWAPS }, (_, k) => ({
      txHash: `0x${(i * 1000 + k).toString(16).padStart(64, '0')}`, logIndex: 0, token: `0x${(((i * BLOCK_SWAPS + k) % TOKENS) + 1).toString(16).padStart(40, '0')}`,
      venue: 'venue-b', source: 'pool', trader: '0x' + '3'.padStart(40, '0'), side: 'buy', quoteAmount: 5_000_000_000n, tokenAmount: 10n ** 20n,
      creatorFee: 0n, platformFee: 0n, feeAsset: 'quote', priceAfter: 10n ** 22n, blockNumber: block, quoteUsd18: 10n ** 18n,
    }))
    const snapshots = trades.map((t) => ({ token: t.token, blockNumber: block, logIndex: 1, source: 'pool' as const, tokenReserve: 10n ** 26n, quoteReserve: 9n * 10n ** 10n, price: 10n ** 22n }))
    const tokens = new Map(trades.map((t) => [t.token, { address: t.token, venue: 'venue-b' as const, quoteAddress: '0x' + '1'.padStart(40, '0'), pool: null, tokenIsToken0: null, virtualToken: 0n, virtualQuote: 0n }]))
    const db = await pool.connect()
    try {
      await db.query('begin')
      await writeAnomalies(ctx, db, { from: block, trades, snapshots, deposits: [], tokens, quoteUsdAt: () => 10n ** 18n, at: () => new Date() })
      await db.query('rollback')
    } finally {
      db.release()
    }
  })
}

await withService('intel', async ({ url, databaseUrl }) => {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 })
  try {
    let chainId: number | undefined
    for (const until = Date.now() + 30_000; chainId === undefined && Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
      chainId = (await pool.query<{ chain_id: number }>('select chain_id from chain_checkpoint limit 1')).rows[0]?.chain_id
    }
    if (chainId === undefined) throw new Error('the service never wrote its checkpoint')
    const seedMs = await seed(pool, chainId, { tokens: TOKENS, swaps: SWAPS })
    const base = `${url}/api/v1`
    const mint = (i: number) => `0x${(((i * 7919) % TOKENS) + 1).toString(16).padStart(40, '0')}`
    await timed(50, (i) => get(`${base}/indicators?mint=${mint(i)}&indicators=rsi,ema,sma,macd&timeframe=15m`)) // warm-up
    const indicators = await timed(REQUESTS, (i) => get(`${base}/indicators?mint=${mint(i)}&indicators=rsi,ema,sma,macd&timeframe=15m`))
    const candles = await timed(REQUESTS, (i) => get(`${base}/tokens/${mint(i)}/candles?interval=15m`))
    const movers = await timed(REQUESTS, () => get(`${base}/signals/top-movers?timeframe=24h&limit=10`))
    const cold: number[] = []
    for (let i = 0; i < COLD; i++) {
      await new Promise((r) => setTimeout(r, 2100))
      const t = performance.now()
      await get(`${base}/signals/top-movers?timeframe=24h&limit=10`)
      cold.push(performance.now() - t)
    }
    cold.sort((a, b) => a - b)
    const store = createMarketIntelStore(pool)
    const boardRead = await timed(20, async () => void (await store.movers({ chainId, windowSeconds: 86_400, reference: [] })))
    const block = await anomalyStep(pool, chainId)
    console.log(JSON.stringify({ tokens: TOKENS, swaps: SWAPS, seedMs: Math.round(seedMs), indicators, candles, topMoversCached: movers, moversBoardRead: boardRead, topMoversAfterExpiry: { n: COLD, p50: +percentile(cold, 50).toFixed(2), max: +cold.at(-1)!.toFixed(2) }, indexerAnomalyStepPerBlock: { swaps: BLOCK_SWAPS, ...block } }, null, 1))
  } finally {
    await pool.end()
  }
}, { RATE_LIMIT_PER_IP: '100000000' })
