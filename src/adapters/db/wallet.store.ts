import type pg from 'pg'
import type { IndexedPrice, OutboxTx, WalletOutbox } from '../../domain/wallet/ports.ts'

/**
 * The wallet's reads and writes in Postgres: what wallet operations recorded (their USD value),
 * the index's prices, the tokens an agent received by plain transfers (and how far its Transfer
 * logs were scanned), and the transaction outbox. What the operations' actors say (confirmed, the
 * swaps' tokens and amounts) is joined in `walletOutcomes.ts`.
 *
 * @example
 * const store = createWalletStore(pool)
 * const usd = await store.usdValueOf(opId)
 */
export function createWalletStore(pool: pg.Pool) {
  return {
    /** The USD value a wallet operation recorded toward its agent's 24-hour spend. */
    async usdValueOf(opId: string): Promise<string | undefined> {
      const { rows } = await pool.query<{ usd: string }>(`select usd_value::text as usd from wallet_op where id = $1`, [opId])
      return rows[0]?.usd
    },

    /** Tokens the agent launched or traded on chain (the indexer's tables); those it swapped to through this service are its ledger's. */
    async knownTokenAddresses(agentId: string, owner: string): Promise<string[]> {
      const { rows } = await pool.query<{ address: string | null }>(
        `select address from token where creator_agent_id = $1 union select token_address from trade where trader = $2`,
        [agentId, owner.toLowerCase()],
      )
      return rows.flatMap((r) => (r.address ? [r.address] : []))
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

/** A wallet operation of an agent as recorded (swaps, transfers, claims), or a launched token with its launch's id. */
export type RecordedOpRow = {
  agent_id: string; name: string; wallet: string; kind: 'swap' | 'transfer' | 'claim' | 'launch'
  token: string | null; usd: string | null; at: string | Date | null; at_us: string | null; ord: string
}
export type ReceiveRow = { agent_id: string; name: string; token_address: string; amount: string; usd: string | null; block_number: string | number; at: string | Date }

/** The agents whose rows are read: one agent, or every agent of a mode (live or paper). */
export type LedgerScope = { agentId: string } | { mode: 'live' | 'paper' }

/**
 * The agent's (or a mode's agents') wallet operations as recorded, and launched tokens with their
 * launch's id (whether each confirmed or went live is its actor's state: the caller joins them),
 * and the transfers into its wallet and paper deposits in block order, in one statement.
 */
export async function recordedLedgerRows(pool: pg.Pool, scope: LedgerScope): Promise<{ ops: RecordedOpRow[]; ins: ReceiveRow[] }> {
  const one = 'agentId' in scope
  const agentOf = (col: string) => (one ? `join agent a on a.id = ${col} where ${col} = $1` : `join agent a on a.id = ${col} and a.mode = $1 where true`)
  const { rows } = await pool.query<RecordedOpRow & ReceiveRow & { src: 'op' | 'in' }>(
    `select * from (
       select 'op' as src, w.agent_id, a.name, a.wallet_address as wallet, w.kind, null::text as token_address, null::text as amount,
              trunc(w.usd_value, 2)::text as usd, w.created_at as at, (extract(epoch from w.created_at) * 1000000)::bigint::text as at_us, w.id as ord,
              null::bigint as block_number, null::text as h, null::bigint as li
         from wallet_op w ${agentOf('w.agent_id')} and w.kind in ('swap', 'transfer', 'claim')
       union all
       select 'op', t.creator_agent_id, a.name, a.wallet_address, 'launch', t.address, null, null, null, null, t.launch_id, null, null, null
         from token t ${agentOf('t.creator_agent_id')} and t.launch_id is not null
       union all
       -- A paper agent's launches (its virtual pools): their seed leaves the ledger as a live launch's does.
       select 'op', p.agent_id, a.name, a.wallet_address, 'launch', p.token, null, null, null, null, p.launch_id, null, null, null
         from paper_pool p ${agentOf('p.agent_id')}
       union all
       -- Transfers in, and a paper agent's virtual deposits (as transfers in at the block they were made in).
       select 'in', t.agent_id, a.name, null, null, t.token_address, t.amount::text, trunc(t.usd_value, 2)::text, t.at, null, null, t.block_number, t.tx_hash, t.log_index::bigint
         from agent_transfer_in t ${agentOf('t.agent_id')}
       union all
       select 'in', d.agent_id, a.name, null, null, d.token, d.amount::text, trunc(d.usd_value, 2)::text, d.created_at, null, null, d.block_number, '~paper',
              (extract(epoch from d.created_at) * 1000000)::bigint
         from paper_deposit d ${agentOf('d.agent_id')}
     ) r order by src, agent_id, block_number, h, li`,
    [one ? scope.agentId : scope.mode],
  )
  return {
    ops: rows.filter((r) => r.src === 'op').map((r) => ({ ...r, token: r.token_address })),
    ins: rows.filter((r) => r.src === 'in'),
  }
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
