/**
 * What the indexer's range writes cost: ROWS trade rows written in one transaction, as
 * `writeRange` does (one `insert ... on conflict do nothing` per row over pg), against the same
 * rows through MikroORM (`em.upsertMany` with `onConflictAction: 'ignore'` on a `defineEntity`
 * entity, and `em.create` + `flush`), and against one raw multi-row statement (`unnest` of one
 * array per column). Each round uses fresh keys in one scratch database.
 * Run: `node bench/indexerWrites.ts` (Postgres at BENCH_PG_ADMIN_URL, default 127.0.0.1:5432).
 */
import { randomBytes } from 'node:crypto'
import { MikroORM, defineEntity, p } from '@mikro-orm/postgresql'
import pg from 'pg'

const adminUrl = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const rows = Number(process.env.ROWS ?? 2000)
const rounds = Number(process.env.ROUNDS ?? 5)
const dbName = `bench_${randomBytes(4).toString('hex')}_idx`
const dbUrl = adminUrl.replace(/\/[^/]*$/, `/${dbName}`)

const TradeSchema = defineEntity({
  name: 'BenchTrade',
  tableName: 'trade',
  properties: {
    chainId: p.integer().primary(),
    txHash: p.text().primary(),
    logIndex: p.integer().primary(),
    tokenAddress: p.text(),
    trader: p.text(),
    side: p.text(),
    quoteAmount: p.decimal('string'),
    tokenAmount: p.decimal('string'),
    ours: p.boolean(),
    blockNumber: p.bigint('number'),
    at: p.datetime(),
  },
  primaryKeys: ['chainId', 'txHash', 'logIndex'],
})

type Row = { txHash: string; logIndex: number; token: string; trader: string; side: string; quote: string; amount: string; ours: boolean; block: number; at: Date }
const makeRows = (): Row[] =>
  Array.from({ length: rows }, (_, i) => ({
    txHash: `0x${randomBytes(32).toString('hex')}`, logIndex: i % 7, token: `0x${randomBytes(20).toString('hex')}`,
    trader: `0x${randomBytes(20).toString('hex')}`, side: i % 2 ? 'buy' : 'sell', quote: '123456789012345678', amount: '987654321098765432109',
    ours: i % 3 === 0, block: 1000 + i, at: new Date(),
  }))

const admin = new pg.Client({ connectionString: adminUrl })
await admin.connect()
await admin.query(`create database ${dbName}`)
try {
  const pool = new pg.Pool({ connectionString: dbUrl, max: 2 })
  await pool.query(`create table trade (chain_id int not null, tx_hash text not null, log_index int not null, token_address text not null,
    trader text not null, side text not null, quote_amount numeric(78) not null, token_amount numeric(78) not null,
    ours boolean not null default false, block_number bigint not null, at timestamptz not null default now(),
    primary key (chain_id, tx_hash, log_index))`)
  const orm = await MikroORM.init({ clientUrl: dbUrl, entities: [TradeSchema], debug: false, allowGlobalContext: false, pool: { min: 0, max: 2 } })

  const raw = async (data: Row[]) => {
    const db = await pool.connect()
    await db.query('begin')
    for (const r of data) {
      await db.query(
        `insert into trade (chain_id, tx_hash, log_index, token_address, trader, side, quote_amount, token_amount, ours, block_number, at)
         values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11) on conflict (chain_id, tx_hash, log_index) do nothing`,
        [31337, r.txHash, r.logIndex, r.token, r.trader, r.side, r.quote, r.amount, r.ours, r.block, r.at],
      )
    }
    await db.query('commit')
    db.release()
  }
  /** The same rows as one statement: one array per column, `unnest` into rows. */
  const rawUnnest = async (data: Row[]) => {
    const db = await pool.connect()
    await db.query('begin')
    await db.query(
      `insert into trade (chain_id, tx_hash, log_index, token_address, trader, side, quote_amount, token_amount, ours, block_number, at)
       select 31337, * from unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::numeric[], $7::numeric[], $8::bool[], $9::bigint[], $10::timestamptz[])
       on conflict (chain_id, tx_hash, log_index) do nothing`,
      [data.map((r) => r.txHash), data.map((r) => r.logIndex), data.map((r) => r.token), data.map((r) => r.trader), data.map((r) => r.side),
        data.map((r) => r.quote), data.map((r) => r.amount), data.map((r) => r.ours), data.map((r) => r.block), data.map((r) => r.at)],
    )
    await db.query('commit')
    db.release()
  }
  const entity = (r: Row) => ({
    chainId: 31337, txHash: r.txHash, logIndex: r.logIndex, tokenAddress: r.token, trader: r.trader, side: r.side,
    quoteAmount: r.quote, tokenAmount: r.amount, ours: r.ours, blockNumber: r.block, at: r.at,
  })
  const upsertMany = async (data: Row[]) => {
    const em = orm.em.fork()
    await em.transactional((tem) => tem.upsertMany(TradeSchema, data.map(entity), { onConflictAction: 'ignore' }))
  }
  const flush = async (data: Row[]) => {
    const em = orm.em.fork()
    for (const r of data) em.create(TradeSchema, entity(r))
    await em.flush()
  }

  const results: Record<string, number[]> = { raw: [], rawUnnest: [], upsertMany: [], flush: [] }
  const ways = { raw, rawUnnest, upsertMany, flush } as const
  for (let round = 0; round <= rounds; round++) {
    for (const [name, fn] of Object.entries(ways)) {
      const t0 = performance.now()
      await fn(makeRows())
      const ms = performance.now() - t0
      if (round > 0) results[name]!.push(ms) // round 0 warms up
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  for (const [name, xs] of Object.entries(results)) {
    const ms = median(xs)
    console.info(`${name.padEnd(10)} ${rows} rows/transaction: median ${ms.toFixed(0)} ms = ${Math.round((rows / ms) * 1000)} rows/s`)
  }
  await orm.close(true)
  await pool.end()
} finally {
  await admin.query(`drop database if exists ${dbName} with (force)`)
  await admin.end()
}
