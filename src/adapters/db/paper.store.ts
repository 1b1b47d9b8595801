import type pg from 'pg'
import { withTransaction } from './transaction.ts'
import { poolAmountOut } from '../../domain/paper/paperPool.ts'

/** A paper balance's key: `eth` for ETH, else the token's address in lower case. */
export const paperToken = (t: { address: string; native: boolean }) => (t.native ? 'eth' : t.address.toLowerCase())

/** A move of a paper agent's virtual balance: `token` is `eth` for ETH, else the token's address (lower case); `amount` in base units. */
export type PaperLeg = { token: string; amount: bigint }

/** A paper launch's virtual pool: its token (the paper address), its quote asset and its reserves (base units) and fee. */
export type PaperPool = { token: string; venue: string; symbol: string; name: string; quoteSymbol: string; quoteReserve: bigint; tokenReserve: bigint; feeBps: number; blockNumber: bigint }

/** What recording a fill answered: its result (the first one's, for a retry), or the leg it could not pay. */
export type PaperFillOutcome = { ok: true; result: Record<string, unknown> } | { ok: false; short: PaperLeg; held: bigint }

/**
 * A paper agent's virtual ledger in Postgres (Migration20261128010000_paper_agents.ts): its
 * balances per token, its virtual deposits and the simulated fills of its wallet operations.
 * A fill and its balance moves are one transaction, recorded once per operation.
 *
 * @example
 * const paper = createPaperStore(pool)
 * await paper.deposit({ id, agentId, token: usdc, balanceKey: usdc, amount: 1000_000000n, usdValue: '1000.00', blockNumber: 12n })
 */
export function createPaperStore(pool: pg.Pool) {
  return {
    /** Whether the agent is a paper agent (false when it does not exist). */
    async isPaper(agentId: string): Promise<boolean> {
      const { rows } = await pool.query<{ mode: string }>({ name: 'paper.mode', text: `select mode from agent where id = $1`, values: [agentId] })
      return rows[0]?.mode === 'paper'
    },

    /** The agent's virtual balances, by token (`eth` for ETH), zero balances left out. */
    async balances(agentId: string): Promise<Map<string, bigint>> {
      const { rows } = await pool.query<{ token: string; amount: string }>(
        `select token, amount::text from paper_balance where agent_id = $1 and amount > 0`, [agentId])
      return new Map(rows.map((r) => [r.token, BigInt(r.amount)]))
    },

    /**
     * A virtual deposit and its balance, once per id (a retry finds the first): `made`, `exists`
     * (the id was recorded already), or `over_limit` (nothing written: the agent's deposits, valued
     * when made, would pass `maxTotalUsd`). The agent's row is locked, so deposits racing each
     * other are counted one after the other.
     */
    async deposit(d: { id: string; agentId: string; token: string; balanceKey: string; amount: bigint; usdValue: string | null; blockNumber: bigint; maxTotalUsd: string }): Promise<'made' | 'exists' | 'over_limit'> {
      return withTransaction(pool, async (db) => {
        await db.query(`select 1 from agent where id = $1 for update`, [d.agentId])
        const { rows: seen } = await db.query(`select 1 from paper_deposit where id = $1`, [d.id])
        if (seen.length > 0) return 'exists'
        const { rowCount } = await db.query(
          `insert into paper_deposit (id, agent_id, token, amount, usd_value, block_number)
           select $1, $2, $3, $4, $5, $6
            where coalesce($5::numeric, 0) + (select coalesce(sum(usd_value), 0) from paper_deposit where agent_id = $2) <= $7::numeric
           on conflict (id) do nothing`,
          [d.id, d.agentId, d.token, d.amount.toString(), d.usdValue, d.blockNumber.toString(), d.maxTotalUsd])
        if (rowCount === 0) return 'over_limit'
        await credit(db, d.agentId, { token: d.balanceKey, amount: d.amount })
        return 'made'
      })
    },

    /** What the agent's virtual deposits were worth when made, in USD ("1000.00"). */
    async depositedUsd(agentId: string): Promise<string> {
      const { rows } = await pool.query<{ usd: string }>(`select trunc(coalesce(sum(usd_value), 0), 2)::text as usd from paper_deposit where agent_id = $1`, [agentId])
      return rows[0]!.usd
    },

    /** A deposit as recorded, or undefined. */
    async depositOf(id: string) {
      const { rows } = await pool.query<{ agent_id: string; token: string; amount: string; usd: string | null; created_at: Date }>(
        `select agent_id, token, amount::text, trunc(usd_value, 2)::text as usd, created_at from paper_deposit where id = $1`, [id])
      return rows[0]
    },

    /**
     * Records an operation's simulated fill: `debit` leaves the agent's balance (refused, nothing
     * written, when it holds less), `credit` arrives; once per operation (a retry answers the first
     * fill's result).
     */
    async recordFill(f: { opId: string; agentId: string; kind: string; debit: PaperLeg; credit?: PaperLeg | undefined; result: Record<string, unknown> }): Promise<PaperFillOutcome> {
      try {
        return await withTransaction(pool, async (db): Promise<PaperFillOutcome> => {
          const { rows: made } = await db.query<{ result: Record<string, unknown>; fresh: boolean }>(
            `insert into paper_fill (op_id, agent_id, kind, result) values ($1, $2, $3, $4)
             on conflict (op_id) do update set op_id = excluded.op_id returning result, (xmax = 0) as fresh`,
            [f.opId, f.agentId, f.kind, JSON.stringify(f.result)])
          if (!made[0]!.fresh) return { ok: true, result: made[0]!.result }
          const { rowCount } = await db.query(
            `update paper_balance set amount = amount - $3 where agent_id = $1 and token = $2 and amount >= $3`,
            [f.agentId, f.debit.token, f.debit.amount.toString()])
          if (rowCount === 0) {
            const { rows } = await db.query<{ amount: string }>(`select amount::text from paper_balance where agent_id = $1 and token = $2`, [f.agentId, f.debit.token])
            // Rolls the fill back: nothing is recorded for a fill the balance cannot pay.
            throw new Short(BigInt(rows[0]?.amount ?? '0'))
          }
          if (f.credit && f.credit.amount > 0n) await credit(db, f.agentId, f.credit)
          return { ok: true, result: f.result }
        })
      } catch (err) {
        if (err instanceof Short) return { ok: false, short: f.debit, held: err.held }
        throw err
      }
    },

    /**
     * Records a paper launch (Migration20261129010000_paper_launches.ts): its fill (once per
     * launch: a retry answers the first one's result), the seed debited when it has one (refused,
     * nothing written, when the agent holds less) and its virtual pool, in one transaction.
     */
    recordLaunch: (l: LaunchFill) => recordLaunch(pool, l),

    /**
     * Fills a swap against a paper token's virtual pool, once per operation (`fillFromPool` below).
     */
    fillFromPool: (f: PoolFill) => fillFromPool(pool, f),

    /** The virtual pools of the paper tokens an agent launched, by token address (lower case). */
    async pools(agentId: string): Promise<Map<string, PaperPool>> {
      const { rows } = await pool.query<{ token: string; venue: string; symbol: string; name: string; quote_symbol: string; quote_reserve: string; token_reserve: string; fee_bps: number; block_number: string }>(
        `select token, venue, symbol, name, quote_symbol, quote_reserve::text, token_reserve::text, fee_bps, block_number from paper_pool where agent_id = $1`, [agentId])
      return new Map(rows.map((r) => [r.token, {
        token: r.token, venue: r.venue, symbol: r.symbol, name: r.name, quoteSymbol: r.quote_symbol,
        quoteReserve: BigInt(r.quote_reserve), tokenReserve: BigInt(r.token_reserve), feeBps: r.fee_bps, blockNumber: BigInt(r.block_number),
      }]))
    },

    /** The fill recorded for an operation, or undefined. */
    async fillOf(opId: string): Promise<Record<string, unknown> | undefined> {
      const { rows } = await pool.query<{ result: Record<string, unknown> }>(`select result from paper_fill where op_id = $1`, [opId])
      return rows[0]?.result
    },
  }
}
export type PaperStore = ReturnType<typeof createPaperStore>

class Slipped extends Error {
  readonly amountOut: bigint
  constructor(amountOut: bigint) {
    super('slippage')
    this.amountOut = amountOut
  }
}

class Short extends Error {
  readonly held: bigint
  constructor(held: bigint) {
    super('short')
    this.held = held
  }
}

function credit(db: pg.PoolClient, agentId: string, leg: PaperLeg) {
  return db.query(
    `insert into paper_balance (agent_id, token, amount) values ($1, $2, $3)
     on conflict (agent_id, token) do update set amount = paper_balance.amount + excluded.amount`,
    [agentId, leg.token, leg.amount.toString()])
}

/** A swap against a paper token's virtual pool: the agent's debit, the token it gets, the minimum out and the fill's result for an amount out. */
type PoolFill = { opId: string; agentId: string; poolToken: string; debit: PaperLeg; creditToken: string; minAmountOut: bigint; result: (amountOut: bigint) => Record<string, unknown> }

/**
 * Fills a swap against a paper token's virtual pool, once per operation: the amount out read
 * from the pool's reserves under its row lock (x * y = k, the fee from the input), refused
 * below `minAmountOut` (`slippage` with what it would pay) or when the agent holds less than
 * `amountIn` (`short`); else the balances and the reserves move, in one transaction.
 */
async function fillFromPool(pool: pg.Pool, f: PoolFill): Promise<PaperFillOutcome | { ok: false; slippage: bigint }> {
  try {
    return await withTransaction(pool, async (db): Promise<PaperFillOutcome> => {
      const known = await db.query<{ result: Record<string, unknown> }>(`select result from paper_fill where op_id = $1`, [f.opId])
      if (known.rows[0]) return { ok: true, result: known.rows[0].result }
      const { rows: [p] } = await db.query<{ quote_reserve: string; token_reserve: string; fee_bps: number }>(
        `select quote_reserve::text, token_reserve::text, fee_bps from paper_pool where token = $1 and agent_id = $2 for update`, [f.poolToken, f.agentId])
      if (!p) throw new Error(`no paper pool ${f.poolToken} for agent ${f.agentId}`)
      const quoteIn = f.debit.token !== f.poolToken
      const [rin, rout] = quoteIn ? [BigInt(p.quote_reserve), BigInt(p.token_reserve)] : [BigInt(p.token_reserve), BigInt(p.quote_reserve)]
      const amountOut = poolAmountOut(f.debit.amount, rin, rout, p.fee_bps)
      if (amountOut < f.minAmountOut) throw new Slipped(amountOut)
      const result = f.result(amountOut)
      const { rowCount: fresh } = await db.query(
        `insert into paper_fill (op_id, agent_id, kind, result) values ($1, $2, 'swap', $3) on conflict (op_id) do nothing`, [f.opId, f.agentId, JSON.stringify(result)])
      if (fresh === 0) throw new Error(`paper fill ${f.opId} recorded meanwhile`)
      const { rowCount } = await db.query(
        `update paper_balance set amount = amount - $3 where agent_id = $1 and token = $2 and amount >= $3`, [f.agentId, f.debit.token, f.debit.amount.toString()])
      if (rowCount === 0) {
        const { rows } = await db.query<{ amount: string }>(`select amount::text from paper_balance where agent_id = $1 and token = $2`, [f.agentId, f.debit.token])
        throw new Short(BigInt(rows[0]?.amount ?? '0'))
      }
      if (amountOut > 0n) await credit(db, f.agentId, { token: f.creditToken, amount: amountOut })
      const [q, t] = quoteIn ? [rin + f.debit.amount, rout - amountOut] : [rout - amountOut, rin + f.debit.amount]
      await db.query(`update paper_pool set quote_reserve = $2, token_reserve = $3 where token = $1`, [f.poolToken, q.toString(), t.toString()])
      return { ok: true, result }
    })
  } catch (err) {
    if (err instanceof Short) return { ok: false, short: f.debit, held: err.held }
    if (err instanceof Slipped) return { ok: false, slippage: err.amountOut }
    throw err
  }
}

/** A paper launch's fill: the seed it debits (none for a venue launch), its virtual pool and its result. */
type LaunchFill = { launchId: string; agentId: string; seed: PaperLeg | null; pool: PaperPool; result: Record<string, unknown> }

async function recordLaunch(pool: pg.Pool, l: LaunchFill): Promise<PaperFillOutcome> {
  try {
    return await withTransaction(pool, async (db): Promise<PaperFillOutcome> => {
      const { rows: made } = await db.query<{ result: Record<string, unknown>; fresh: boolean }>(
        `insert into paper_fill (op_id, agent_id, kind, result) values ($1, $2, 'launch', $3)
         on conflict (op_id) do update set op_id = excluded.op_id returning result, (xmax = 0) as fresh`,
        [l.launchId, l.agentId, JSON.stringify(l.result)])
      if (!made[0]!.fresh) return { ok: true, result: made[0]!.result }
      if (l.seed) {
        const { rowCount } = await db.query(
          `update paper_balance set amount = amount - $3 where agent_id = $1 and token = $2 and amount >= $3`,
          [l.agentId, l.seed.token, l.seed.amount.toString()])
        if (rowCount === 0) {
          const { rows } = await db.query<{ amount: string }>(`select amount::text from paper_balance where agent_id = $1 and token = $2`, [l.agentId, l.seed.token])
          throw new Short(BigInt(rows[0]?.amount ?? '0'))
        }
      }
      const p = l.pool
      await db.query(
        `insert into paper_pool (token, launch_id, agent_id, venue, symbol, name, quote_symbol, quote_reserve, token_reserve, fee_bps, block_number)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [p.token, l.launchId, l.agentId, p.venue, p.symbol, p.name, p.quoteSymbol, p.quoteReserve.toString(), p.tokenReserve.toString(), p.feeBps, p.blockNumber.toString()])
      return { ok: true, result: l.result }
    })
  } catch (err) {
    if (err instanceof Short) return { ok: false, short: l.seed!, held: err.held }
    throw err
  }
}
