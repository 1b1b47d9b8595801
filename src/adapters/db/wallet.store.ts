import type pg from 'pg'
import type { IndexedPrice, OutboxTx, SwapFill, WalletOutbox } from '../../domain/wallet/ports.ts'
import type { LedgerOp } from '../../domain/wallet/ledgerOps.ts'

/**
 * The wallet's reads and writes in Postgres: what wallet operations recorded (their USD value,
 * the swaps' tokens for the portfolio and cost basis), the tokens an agent received by plain
 * transfers (and how far its Transfer logs were scanned), and the transaction outbox.
 *
 * @example
 * const store = createWalletStore(pool)
 * const fills = await store.confirmedSwaps(agentId)
 */
export function createWalletStore(pool: pg.Pool) {
  return {
    /** The USD value a wallet operation recorded toward its agent's 24-hour spend. */
    async usdValueOf(opId: string): Promise<string | undefined> {
      const { rows } = await pool.query<{ usd: string }>(`select usd_value::text as usd from wallet_op where id = $1`, [opId])
      return rows[0]?.usd
    },

    /** Tokens the agent launched, traded on chain (indexer), or swapped to through this service (no indexer lag). */
    async knownTokenAddresses(agentId: string, owner: string): Promise<string[]> {
      const { rows } = await pool.query<{ address: string | null }>(
        `select address from token where creator_agent_id = $1
         union select token_address from trade where trader = $2
         union select x.snapshot->'context'->'params'->>'tokenOut' from wallet_op w join actor x on x.id = w.id
          where w.agent_id = $1 and w.kind = 'swap' and x.status = 'confirmed'`,
        [agentId, owner.toLowerCase()],
      )
      return rows.flatMap((r) => (r.address ? [r.address] : []))
    },

    /** The agent's confirmed swaps, oldest first: tokens and base-unit amounts, and the USD paid. */
    async confirmedSwaps(agentId: string): Promise<SwapFill[]> {
      const { rows } = await pool.query<{ ctx: { params: Record<string, string | undefined>; result: Record<string, string | undefined> | null } }>(
        `select x.snapshot->'context' as ctx from wallet_op w join actor x on x.id = w.id
          where w.agent_id = $1 and w.kind = 'swap' and x.status = 'confirmed' order by w.created_at`,
        [agentId],
      )
      return rows.map(({ ctx: { params: p, result: r } }) => ({
        tokenIn: p.tokenIn,
        tokenOut: p.tokenOut,
        amountIn: p.amountIn,
        amountOut: r?.amountOutBaseUnits,
        valueInUsd: p.valueInUsd,
      }))
    },

    /**
     * The agent's PnL ledger (pnlRules.ts): its confirmed swaps, transfers out and creator-fee
     * claims, its live launches, and the transfers into its wallet the indexer saw, in block
     * order (a transfer in first within a block). `at` is when an operation was recorded or a
     * transfer's block time, kept from going backwards in that order.
     */
    async ledgerOps(agentId: string): Promise<LedgerOp[]> {
      return (await ledgerRows(pool, agentId)).get(agentId)?.ops ?? []
    },

    /** Every live agent's ledger (as ledgerOps), with its name (the PnL leaderboard), of agents of one mode (live or paper). */
    async allLedgerOps(mode: 'live' | 'paper' = 'live'): Promise<Array<{ agentId: string; name: string; ops: LedgerOp[] }>> {
      return [...(await ledgerRows(pool, undefined, mode)).values()]
    },

    /** The index's prices of `tokens` over a range (readIndexedPrices). */
    indexedPrices: (p: IndexedPricesQuery) => readIndexedPrices(pool, p),

    /** The account's agent whose wallet this is. */
    async agentIdByWallet(accountId: string, wallet: string): Promise<string | undefined> {
      const { rows } = await pool.query<{ id: string }>(`select id from agent where account_id = $1 and wallet_address = $2 limit 1`, [accountId, wallet.toLowerCase()])
      return rows[0]?.id
    },

    /** The last block whose Transfer logs to the agent's wallet were scanned; undefined before the first scan. */
    async scannedBlock(agentId: string): Promise<bigint | undefined> {
      const { rows } = await pool.query<{ scanned: string }>(`select scanned_block::text as scanned from agent_transfer_scan where agent_id = $1`, [agentId])
      return rows[0] ? BigInt(rows[0].scanned) : undefined
    },

    /** Keeps the tokens one scan found and how far it went (never backwards). */
    async recordScan(agentId: string, toBlock: bigint, found: string[]): Promise<void> {
      if (found.length > 0) {
        await pool.query(`insert into agent_received_token (agent_id, token_address) select $1, unnest($2::text[]) on conflict do nothing`, [agentId, found])
      }
      await pool.query(
        `insert into agent_transfer_scan (agent_id, scanned_block) values ($1, $2)
         on conflict (agent_id) do update set scanned_block = greatest(agent_transfer_scan.scanned_block, excluded.scanned_block)`,
        [agentId, toBlock.toString()],
      )
    },

    /** Every token the agent's wallet was found to receive by a plain transfer. */
    async receivedTokens(agentId: string): Promise<string[]> {
      const { rows } = await pool.query<{ token_address: string }>(`select token_address from agent_received_token where agent_id = $1`, [agentId])
      return rows.map((r) => r.token_address)
    },

    outbox: createOutboxReader(pool),
  }
}
export type WalletStore = ReturnType<typeof createWalletStore>

type IndexedPricesQuery = { tokens: string[]; from: Date; to: Date; stepSeconds: number; weth: string; quoteDecimals: ReadonlyArray<readonly [string, number]> }

/**
 * The index's prices of `tokens` (PortfolioReads.indexedPrices): a launched token's price
 * after each trade (`price_after` x the quote's USD at that block, per whole token), and ETH's
 * (as `weth`) at each ETH-quoted trade; the last per token and step, and the last before `from`.
 */
async function readIndexedPrices(pool: pg.Pool, { tokens, from, to, stepSeconds, weth, quoteDecimals }: IndexedPricesQuery): Promise<IndexedPrice[]> {
  if (tokens.length === 0) return []
  const { rows } = await pool.query<{ token: string; at: Date; usd18: string }>(
    // The trades of the tokens asked for (and of every ETH-quoted token when ETH is) in the
    // range, and each one's last before it, by the trade_token_at index.
    `with q(symbol, decimals) as (select * from unnest($6::text[], $7::int[])),
     tk as (
       select t.address, q.decimals, t.address = any($1) as held, ($5 = any($1) and t.quote_symbol = 'ETH') as eth
         from token t join q on q.symbol = t.quote_symbol
        where t.address = any($1) or ($5 = any($1) and t.quote_symbol = 'ETH')
     ),
     tr as (
       select tr.token_address, tr.at, tr.block_number, tr.log_index, tr.price_after, tr.quote_usd
         from tk join trade tr on tr.token_address = tk.address and tr.at >= $2 and tr.at <= $3 and tr.quote_usd is not null
       union all
       select p.* from tk cross join lateral (
         select tr.token_address, tr.at, tr.block_number, tr.log_index, tr.price_after, tr.quote_usd from trade tr
          where tr.token_address = tk.address and tr.at < $2 and tr.quote_usd is not null
          order by tr.at desc, tr.block_number desc, tr.log_index desc limit 1) p
     ),
     obs as (
       select tr.token_address as token, tr.at, tr.block_number, tr.log_index, trunc(tr.price_after * tr.quote_usd / power(10::numeric, 18 + tk.decimals)) as usd18
         from tr join tk on tk.address = tr.token_address where tk.held and tr.price_after is not null
       union all
       select $5, tr.at, tr.block_number, tr.log_index, trunc(tr.quote_usd) from tr join tk on tk.address = tr.token_address where tk.eth
     )
     select token, at, usd18::text from (
       select distinct on (token, bucket) token, at, usd18 from (
         select *, case when at < $2 then -1 else floor(extract(epoch from at - $2) / $4) end as bucket from obs
       ) b order by token, bucket, at desc, block_number desc, log_index desc
     ) l order by at`,
    [tokens, from, to, stepSeconds, weth, quoteDecimals.map(([s]) => s), quoteDecimals.map(([, d]) => d)],
  )
  return rows.map((r) => ({ token: r.token, at: new Date(r.at), usd18: BigInt(r.usd18) }))
}

type Ctx = { params: Record<string, string | undefined>; result: Record<string, unknown> | null }
type OpRow = { agent_id: string; name: string; wallet: string; kind: 'swap' | 'transfer' | 'claim' | 'launch'; token: string | null; usd: string | null; at: string | Date; ctx: Ctx }
type ReceiveRow = { agent_id: string; name: string; token_address: string; amount: string; usd: string | null; block_number: string | number; at: string | Date }
/** A ledger operation with the block it was mined in (null: unknown, kept in recorded order). */
type Sorted = { op: LedgerOp; block: bigint | null }
type Claimed = { token: string; amount: string; to: string; valueUsd?: string | null }
type Launched = { gasUsd?: string; allocation: string; seed: { token: string; amount: string } | null }

/**
 * The ledgers of one agent (or of every live agent): wallet operations and launches in recorded
 * order, transfers in by block, merged (mergeLedger).
 */
async function ledgerRows(pool: pg.Pool, agentId: string | undefined, mode: 'live' | 'paper' = 'live') {
  const one = agentId !== undefined
  const params = one ? [agentId] : [mode]
  const live = `join agent a on a.id = %s and a.mode = $1 join actor ax on ax.id = a.id::text and ax.status <> 'deleted'`
  const { rows } = await pool.query<OpRow>(
    `select * from (
       select w.agent_id, a.name, a.wallet_address as wallet, w.kind, null as token, trunc(w.usd_value, 2)::text as usd, w.created_at as at, w.id as ord,
              x.snapshot->'context' as ctx
         from wallet_op w join actor x on x.id = w.id ${one ? 'join agent a on a.id = w.agent_id' : live.replace('%s', 'w.agent_id')}
        where ${one ? 'w.agent_id = $1 and' : ''} w.kind in ('swap', 'transfer', 'claim') and x.status = 'confirmed'
       union all
       select t.creator_agent_id, a.name, a.wallet_address, 'launch', t.address, null, x.created_at, x.id, x.snapshot->'context'
         from token t join actor x on x.id = t.launch_id and x.kind = 'launch' ${one ? 'join agent a on a.id = t.creator_agent_id' : live.replace('%s', 't.creator_agent_id')}
        where ${one ? 't.creator_agent_id = $1 and' : ''} x.status = 'live'
       union all
       -- A paper agent's launches (its virtual pools): their seed leaves the ledger as a live launch's does.
       select p.agent_id, a.name, a.wallet_address, 'launch', p.token, null, x.created_at, x.id, x.snapshot->'context'
         from paper_pool p join actor x on x.id = p.launch_id and x.kind = 'launch' ${one ? 'join agent a on a.id = p.agent_id' : live.replace('%s', 'p.agent_id')}
        where ${one ? 'p.agent_id = $1 and' : ''} x.status = 'live'
     ) o order by agent_id, at, ord`,
    params,
  )
  // Transfers in, and a paper agent's virtual deposits (as transfers in at the block they were made in).
  const { rows: ins } = await pool.query<ReceiveRow>(
    `select * from (
       select t.agent_id, a.name, t.token_address, t.amount::text, trunc(t.usd_value, 2)::text as usd, t.block_number, t.at, t.tx_hash as h, t.log_index::bigint as li
         from agent_transfer_in t ${one ? 'join agent a on a.id = t.agent_id' : live.replace('%s', 't.agent_id')}
        ${one ? 'where t.agent_id = $1' : ''}
       union all
       select d.agent_id, a.name, d.token, d.amount::text, trunc(d.usd_value, 2)::text, d.block_number, d.created_at, '~paper', (extract(epoch from d.created_at) * 1000000)::bigint
         from paper_deposit d ${one ? 'join agent a on a.id = d.agent_id' : live.replace('%s', 'd.agent_id')}
        ${one ? 'where d.agent_id = $1' : ''}
     ) i order by agent_id, block_number, h, li`,
    params,
  )
  const by = new Map<string, { agentId: string; name: string; ops: Sorted[]; ins: Sorted[] }>()
  const entry = (agentId: string, name: string) => {
    const e = by.get(agentId) ?? { agentId, name, ops: [], ins: [] }
    by.set(agentId, e)
    return e
  }
  for (const r of rows) entry(r.agent_id, r.name).ops.push(opOf(r))
  for (const r of ins) entry(r.agent_id, r.name).ins.push(receiveOf(r))
  return new Map([...by].map(([id, e]) => [id, { agentId: e.agentId, name: e.name, ops: mergeLedger(e.ops, e.ins) }]))
}

function opOf({ kind, usd, at, wallet, token, ctx }: OpRow): Sorted {
  const p = ctx.params
  const r = (ctx.result ?? {}) as Record<string, string | undefined>
  const when = new Date(at)
  if (kind === 'launch') {
    const c = ctx as unknown as { blockNumber?: string | null; ledger?: Launched | null }
    const l = c.ledger
    return {
      op: { kind, at: when, gasUsd: l?.gasUsd, token: token ?? '', allocation: l?.allocation ?? '0', seed: l?.seed ?? null },
      block: c.blockNumber ? BigInt(c.blockNumber) : null,
    }
  }
  const block = r.blockNumber ? BigInt(r.blockNumber) : null
  if (kind === 'claim') {
    const claimed = ((ctx.result?.claimed ?? []) as Claimed[]).map((c) => ({ token: c.token, amount: c.amount, valueUsd: c.valueUsd ?? null, held: c.to === wallet }))
    return { op: { kind, at: when, gasUsd: r.gasUsd, claimed }, block }
  }
  const op: LedgerOp = kind === 'swap'
    ? { kind, at: when, gasUsd: r.gasUsd, tokenIn: p.tokenIn, tokenOut: p.tokenOut, amountIn: p.amountIn, amountOut: r.amountOutBaseUnits, valueInUsd: p.valueInUsd }
    : { kind, at: when, gasUsd: r.gasUsd, token: p.token ?? '', amount: p.amount ?? '0', valueUsd: usd ?? '0' }
  return { op, block }
}

const receiveOf = (r: ReceiveRow): Sorted => ({
  op: { kind: 'receive', at: new Date(r.at), token: r.token_address, amount: r.amount, valueUsd: r.usd },
  block: BigInt(r.block_number),
})

/** Wallet operations (recorded order) and transfers in (block order) merged by block; `at` never goes backwards. */
function mergeLedger(ops: Sorted[], ins: Sorted[]): LedgerOp[] {
  const out: LedgerOp[] = []
  let i = 0
  let j = 0
  while (i < ops.length || j < ins.length) {
    const a = ops[i]
    const b = ins[j]
    const takeIn = b !== undefined && (a === undefined || (a.block !== null && b.block! <= a.block))
    out.push(takeIn ? b.op : a!.op)
    if (takeIn) j++
    else i++
  }
  let latest = 0
  for (const op of out) {
    const t = op.at?.getTime() ?? 0
    if (t < latest) op.at = new Date(latest)
    else latest = t
  }
  return out
}

type OutboxRow = {
  id: string
  kind: string
  hash: string | null
  nonce: string
  status: string
  to_address: string | null
  block_number: string | null
  gas_used: string | null
  contract_address: string | null
  replaced_by: string | null
  created_at: Date
  updated_at: Date
}

function createOutboxReader(pool: pg.Pool): WalletOutbox {
  return {
    async page(agentId, { limit, before }) {
      const params: unknown[] = [agentId, limit]
      const cond = before ? `and (created_at, id) < ((select created_at from chain_tx where id = $3), $3)` : ''
      if (before) params.push(before)
      const { rows } = await pool.query<OutboxRow>(
        `select id, kind, hash, nonce, status, to_address, block_number, gas_used, contract_address, replaced_by, created_at, updated_at
           from chain_tx where agent_id = $1 ${cond} order by created_at desc, id desc limit $2`,
        params,
      )
      return rows.map(
        (r): OutboxTx => ({
          id: r.id,
          kind: r.kind,
          hash: r.hash,
          nonce: Number(r.nonce),
          status: r.status,
          to: r.to_address,
          blockNumber: r.block_number === null ? null : Number(r.block_number),
          gasUsed: r.gas_used,
          contractAddress: r.contract_address,
          replacedBy: r.replaced_by,
          createdAt: new Date(r.created_at).toISOString(),
          updatedAt: new Date(r.updated_at).toISOString(),
        }),
      )
    },
  }
}
