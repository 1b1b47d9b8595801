import type pg from 'pg'
import type { FeeTotalRow, MarketStats, PlatformCounts, RankingRow } from '../../domain/market/ports.ts'
import { LATEST_PRICE_SQL } from './tokenBoard.store.ts'

const big = (v: string | null) => (v === null ? null : BigInt(v))

/** Creator fees earned per token (quote and token sides) as a lateral join on alias `t`. */
const EARNED_SQL = `(select sum(e.quote_amount) as quote, sum(e.token_amount) as token from creator_fee_event e
  where e.chain_id = t.chain_id and e.token_address = t.address and e.kind = 'earned')`

/** What the figures need of the agents' states, which are their actors' (the runtime's read model). */
export type AgentStateReads = {
  /** The state of each agent among `ids` (absent: no such agent), in one read. */
  agentStates: (ids: readonly string[]) => Promise<ReadonlyMap<string, string>>
  /** The number of agents in each state, exact. */
  agentCounts: () => Promise<ReadonlyMap<string, number>>
}

/**
 * Platform-wide sums over the indexer's tables (agents, tokens, trades, creator fee events), in
 * raw SQL: each answer is a handful of aggregates over whole tables, which the database sums in
 * one pass each instead of loading every row; the use cases keep the answers for 2 s. The agents'
 * states come from `AgentStateReads`: the ranking leaves out deleted agents with one read of the
 * states of the agents it found, and the counts of agents are the runtime's counts by state.
 *
 * @example
 * const stats = createMarketStatsStore(pool, { agentStates: (ids) => runtime.read.statesOf('agent', ids), agentCounts: () => runtime.read.countsOf('agent') })
 * const rows = await stats.ranking(chainId)
 */
export function createMarketStatsStore(pool: pg.Pool, { agentStates, agentCounts }: AgentStateReads): MarketStats {
  const onChain = (chainId: number | undefined, first = 1) => (chainId === undefined ? { filter: '', params: [] } : { filter: `and t.chain_id = $${first}`, params: [chainId] })
  return {
    async ranking(chainId): Promise<RankingRow[]> {
      const c = onChain(chainId)
      const { rows } = await pool.query<{ agent_id: string; name: string; quote_symbol: string; quote: string; token: string; price: string | null }>(
        `select a.id as agent_id, a.name, t.quote_symbol, coalesce(f.quote, 0)::text as quote, coalesce(f.token, 0)::text as token,
                case when f.token > 0 then ${LATEST_PRICE_SQL} end::text as price
           from agent a
           join token t on t.creator_agent_id = a.id ${c.filter}
           left join lateral ${EARNED_SQL} f on true`,
        c.params,
      )
      const states = await agentStates([...new Set(rows.map((r) => r.agent_id))])
      return rows.filter((r) => states.has(r.agent_id) && states.get(r.agent_id) !== 'deleted').map((r) => ({ agentId: r.agent_id, name: r.name, quoteSymbol: r.quote_symbol, quote: BigInt(r.quote), token: BigInt(r.token), price: big(r.price) }))
    },

    async platformCounts(chainId): Promise<PlatformCounts> {
      const c = onChain(chainId)
      const [agents, tokens, volume, fees] = await Promise.all([
        agentCounts(),
        pool.query<{ launched: string; indexed: string }>(
          `select count(*) filter (where t.creator_agent_id is not null)::text as launched, count(*)::text as indexed
             from token t where true ${c.filter}`,
          c.params,
        ),
        pool.query<{ quote_symbol: string; volume: string; trades: string }>(
          `select t.quote_symbol, sum(tr.quote_amount)::text as volume, count(*)::text as trades
             from trade tr join token t on t.address = tr.token_address
            where tr.at > now() - interval '24 hours' ${c.filter} group by t.quote_symbol`,
          c.params,
        ),
        pool.query<{ quote_symbol: string; quote: string; token: string; price: string | null }>(
          `select t.quote_symbol, f.quote::text, f.token::text, case when f.token > 0 then ${LATEST_PRICE_SQL} end::text as price
             from token t
             join lateral ${EARNED_SQL} f on true
            where t.creator_agent_id is not null and f.quote is not null ${c.filter}`,
          c.params,
        ),
      ])
      return {
        agents: [...agents].reduce((sum, [status, n]) => (status === 'deleted' ? sum : sum + n), 0),
        runningAgents: agents.get('running') ?? 0,
        tokensLaunched: Number(tokens.rows[0]!.launched),
        tokensIndexed: Number(tokens.rows[0]!.indexed),
        volume24h: volume.rows.map((v) => ({ quoteSymbol: v.quote_symbol, volume: BigInt(v.volume), trades: Number(v.trades) })),
        feesEarned: fees.rows.map((f) => ({ quoteSymbol: f.quote_symbol, quote: BigInt(f.quote), token: BigInt(f.token), price: big(f.price) })),
      }
    },

    async feeTotals(chainId): Promise<FeeTotalRow[]> {
      const { rows } = await pool.query<{
        venue: string; quote_symbol: string; fee_asset: 'quote' | 'token'; price: string | null
        trades: string; creator: string; platform: string; trades_24h: string; creator_24h: string; platform_24h: string
      }>(
        `with agg as (
           select tr.token_address, tr.venue, tr.fee_asset, count(*) as trades,
                  sum(tr.creator_fee) as creator, sum(tr.platform_fee) as platform,
                  count(*) filter (where tr.at > now() - interval '24 hours') as trades_24h,
                  coalesce(sum(tr.creator_fee) filter (where tr.at > now() - interval '24 hours'), 0) as creator_24h,
                  coalesce(sum(tr.platform_fee) filter (where tr.at > now() - interval '24 hours'), 0) as platform_24h
             from trade tr ${chainId === undefined ? '' : 'where tr.chain_id = $1'}
            group by tr.token_address, tr.venue, tr.fee_asset)
         select agg.venue, t.quote_symbol, agg.fee_asset, case when agg.fee_asset = 'token' then ${LATEST_PRICE_SQL} end::text as price,
                agg.trades::text, agg.creator::text, agg.platform::text, agg.trades_24h::text, agg.creator_24h::text, agg.platform_24h::text
           from agg join token t on t.address = agg.token_address`,
        chainId === undefined ? [] : [chainId],
      )
      return rows.map((r) => ({
        venue: r.venue, quoteSymbol: r.quote_symbol, feeAsset: r.fee_asset, price: big(r.price),
        trades: Number(r.trades), creator: BigInt(r.creator), platform: BigInt(r.platform),
        trades24h: Number(r.trades_24h), creator24h: BigInt(r.creator_24h), platform24h: BigInt(r.platform_24h),
      }))
    },

    async indexedBlock(chainId) {
      if (chainId === undefined) return null
      const { rows } = await pool.query<{ block_number: string }>(`select block_number from chain_checkpoint where chain_id = $1`, [chainId])
      return rows[0] ? Number(rows[0].block_number) : null
    },
  }
}
