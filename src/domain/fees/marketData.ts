import type pg from 'pg'
import type { Address } from 'viem'
import type { ChainHandle } from '../../chain/chain.ts'
import { ServiceUnavailableError, ValidationError } from '../errors.ts'
import { createPriceReader, type PricePoint } from '../../chain/priceReader.ts'
import { formatPrice, formatUsd } from '../tokens/priceMath.ts'
import { LATEST_PRICE_SQL, indexedBlock, quotePrices, valueOf } from './feeValuation.ts'
import { PRICE_24H_AGO_SQL, tokenFigures, VOLUME_24H_SQL } from './tokenFigures.ts'

/** Most tokens one price request may name. */
export const MAX_PRICE_TOKENS = 50
/** How long platform stats and the leaderboard ranking are reused. */
const CACHE_MS = 2000

type Resolved =
  | { kind: 'quote'; symbol: string; name: string; address: string }
  | { kind: 'stock'; symbol: string; name: string; address: string; pair: Address; decimals: number }
  | {
      kind: 'launched'; symbol: string; name: string; address: string; venue: string; quoteSymbol: string; poolAddress: string | null
      /** From the indexer: supply, quote base units traded in 24 h, the price 24 h ago. */
      totalSupply: bigint; volume24h: bigint; price24hAgo: bigint | null
    }

/** Display names of the quote assets (the manifest has symbols only). */
const QUOTE_NAMES: Record<string, string> = { ETH: 'Ether', USDC: 'USD Coin' }

/** A number for clients that read one (`price`, `volume24h`, `marketCap`) beside the exact decimal string. */
const asNumber = (decimal: string | null) => (decimal === null ? null : Number(decimal))

export type MarketData = ReturnType<typeof createMarketData>

/**
 * Public market data: USD prices read from the pools (and the venue-a curve) at one block, the
 * tokenized stocks, platform counters and the creator fee leaderboard.
 *
 * @example
 * const market = createMarketData({ pool, chain })
 * await market.prices(['ETH', 'USDC', '0xabc…'], 'tokens')
 */
export function createMarketData({ pool, chain }: { pool: pg.Pool; chain: ChainHandle | undefined }) {
  const requireChain = () => {
    if (!chain) throw new ServiceUnavailableError('The chain is not configured.', { code: 'chain_unavailable' })
    return chain
  }

  /** Platform-wide figures are shared by every caller for a moment (public routes, whole-table reads). */
  const cache = new Map<string, { at: number; value: Promise<unknown> }>()
  function cached<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const hit = cache.get(key)
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.value as Promise<T>
    const value = fn()
    cache.set(key, { at: Date.now(), value })
    value.catch(() => cache.get(key)?.value === value && cache.delete(key))
    return value
  }

  /** Resolves symbols (ETH, WETH, USDC, stock tickers; any case) and addresses; unknown ones are collected. */
  async function resolve(c: ChainHandle, wanted: string[]): Promise<{ found: Map<string, Resolved>; unknown: string[] }> {
    const { contracts, stocks } = c.manifest
    const found = new Map<string, Resolved>()
    const unknown: string[] = []
    const addresses: string[] = []
    for (const w of wanted) {
      const lower = w.toLowerCase()
      const stock = stocks.find((s) => s.symbol.toLowerCase() === lower || s.address.toLowerCase() === lower)
      if (lower === 'eth' || lower === 'weth' || lower === contracts.weth.toLowerCase()) {
        found.set(w, { kind: 'quote', symbol: 'ETH', name: QUOTE_NAMES.ETH!, address: contracts.weth.toLowerCase() })
      } else if (lower === 'usdc' || lower === contracts.usdc.toLowerCase()) {
        found.set(w, { kind: 'quote', symbol: 'USDC', name: QUOTE_NAMES.USDC!, address: contracts.usdc.toLowerCase() })
      } else if (stock) {
        found.set(w, { kind: 'stock', symbol: stock.symbol, name: stock.name, address: stock.address.toLowerCase(), pair: stock.pair, decimals: stock.decimals })
      } else if (/^0x[0-9a-f]{40}$/.test(lower)) {
        addresses.push(lower)
      } else {
        unknown.push(w)
      }
    }
    if (addresses.length > 0) {
      const { rows } = await pool.query<{
        address: string; symbol: string; name: string; venue: string; quote_symbol: string; pool_address: string | null
        total_supply: string; volume_24h: string; price_24h_ago: string | null
      }>(
        `select t.address, t.symbol, t.name, t.venue, t.quote_symbol, t.pool_address, t.total_supply::text,
                ${VOLUME_24H_SQL}::text as volume_24h, ${PRICE_24H_AGO_SQL}::text as price_24h_ago
           from token t where t.chain_id = $1 and t.address = any($2)`,
        [c.chainId, addresses],
      )
      const byAddress = new Map(rows.map((r) => [r.address, r]))
      for (const w of wanted) {
        const r = byAddress.get(w.toLowerCase())
        if (r && !found.has(w)) {
          found.set(w, {
            kind: 'launched', symbol: r.symbol, name: r.name, address: r.address, venue: r.venue, quoteSymbol: r.quote_symbol,
            poolAddress: r.pool_address, totalSupply: BigInt(r.total_supply), volume24h: BigInt(r.volume_24h),
            price24hAgo: r.price_24h_ago === null ? null : BigInt(r.price_24h_ago),
          })
        } else if (!r && /^0x[0-9a-fA-F]{40}$/.test(w) && !found.has(w)) {
          unknown.push(w)
        }
      }
    }
    return { found, unknown }
  }

  return {
    /**
     * USD prices of tokens named by symbol or address, all read at one block. `field` names the
     * query parameter for errors (422 `field_errors.tokens`, plus `mint` for the one-token form).
     */
    async prices(wanted: string[], field: 'tokens' | 'mint') {
      const fieldErrors = (message: string): Record<string, string> => (field === 'mint' ? { mint: message, tokens: message } : { tokens: message })
      if (wanted.length === 0) throw new ValidationError(fieldErrors('Name at least one token: a symbol (ETH, USDC, TSLAx) or a token address.'))
      if (wanted.length > MAX_PRICE_TOKENS) throw new ValidationError(fieldErrors(`At most ${MAX_PRICE_TOKENS} tokens.`))
      const c = requireChain()
      const { found, unknown } = await resolve(c, wanted)
      if (unknown.length > 0) {
        throw new ValidationError(fieldErrors(`Unknown token${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}. Use ETH, USDC, a stock symbol or a launched token's address.`))
      }
      const reader = await createPriceReader(c)
      const block = Number(reader.block)
      const prices = await Promise.all(
        wanted.map(async (token) => {
          const r = found.get(token)!
          let point: { usd18: bigint | null; source: Address | null; sourceType: PricePoint['sourceType'] }
          let extra: Record<string, unknown> = {}
          // Market figures come from the indexer, which records launched tokens' trades only.
          let figures: { change24h: number | null; volume24hUsd: string | null; marketCapUsd: string | null } = {
            change24h: null, volume24hUsd: null, marketCapUsd: null,
          }
          if (r.kind === 'quote') point = (await reader.quote(r.symbol))!
          else if (r.kind === 'stock') point = await reader.stock({ address: r.address as Address, pair: r.pair, decimals: r.decimals })
          else {
            const m = await reader.launched(r)
            point = m
            extra = { venue: r.venue, quote: r.quoteSymbol, phase: m.phase }
            figures = tokenFigures({
              totalSupply: r.totalSupply, price: m.price, price24hAgo: r.price24hAgo, volume24h: r.volume24h,
              quoteDecimals: c.manifest.quoteAssets[r.quoteSymbol]?.decimals, quoteUsd18: (await reader.quote(r.quoteSymbol))?.usd18 ?? null,
            })
          }
          const priceUsd = point.usd18 === null ? null : formatPrice(point.usd18)
          return {
            token,
            mint: r.address,
            symbol: r.symbol,
            name: r.name,
            address: r.address,
            kind: r.kind,
            price: asNumber(priceUsd),
            priceUsd,
            currency: 'usd' as const,
            change24h: figures.change24h,
            volume24h: asNumber(figures.volume24hUsd),
            volume24hUsd: figures.volume24hUsd,
            marketCap: asNumber(figures.marketCapUsd),
            marketCapUsd: figures.marketCapUsd,
            source: point.source?.toLowerCase() ?? null,
            sourceType: point.sourceType,
            block,
            ...extra,
          }
        }),
      )
      return { prices, block }
    },

    /** The tokenized stocks of the deployment with their live USD price and logo. */
    async stockTokens() {
      const c = requireChain()
      const reader = await createPriceReader(c)
      const stocks = await Promise.all(
        c.manifest.stocks.map(async (s) => {
          const p = await reader.stock(s)
          return {
            symbol: s.symbol,
            name: s.name,
            address: s.address.toLowerCase(),
            decimals: s.decimals,
            logoUrl: s.logoUrl,
            priceUsd: formatPrice(p.usd18),
            seedPriceUsd: formatPrice(BigInt(s.seedPriceUsdc) * 10n ** 12n),
            source: s.pair.toLowerCase(),
            sourceType: 'pool' as const,
            block: Number(reader.block),
          }
        }),
      )
      return { stocks, block: Number(reader.block) }
    },

    /** Platform counters: agents, running agents, tokens launched by agents, 24 h volume and creator fees in USD. */
    stats() {
      return cached('stats', platformStats)
    },

    /**
     * Agents ranked by the creator fees their tokens earned, in USD (indexed fee events; quote
     * assets at today's price, token-side fees at the token's latest price). Public fields only.
     */
    async leaderboard({ limit, offset }: { limit: number; offset: number }) {
      const { ranked, indexedBlock: block } = await cached('leaderboard', ranking)
      const page = ranked.slice(offset, offset + limit)
      return {
        leaderboard: page.map((a, i) => ({
          rank: offset + i + 1,
          agentId: a.agentId,
          name: a.name,
          earnedUsd: formatUsd(a.usd),
          tokensLaunched: a.tokens,
        })),
        total: ranked.length,
        nextOffset: offset + limit < ranked.length ? offset + limit : null,
        indexedBlock: block,
      }
    },
  }

  /** Every agent with a launched token, by creator fees earned (USD), then tokens launched, then id. */
  async function ranking() {
    const prices = await quotePrices(chain)
    const { rows } = await pool.query<{
      agent_id: string; name: string; quote_symbol: string; quote: string; token: string; price: string | null
    }>(
      `select a.id as agent_id, a.name, t.quote_symbol, coalesce(f.quote, 0)::text as quote, coalesce(f.token, 0)::text as token,
              case when f.token > 0 then ${LATEST_PRICE_SQL} end::text as price
         from agent a
         join actor x on x.id = a.id::text and x.status <> 'deleted'
         join token t on t.creator_agent_id = a.id ${chain ? 'and t.chain_id = $1' : ''}
         left join lateral (select sum(e.quote_amount) as quote, sum(e.token_amount) as token from creator_fee_event e
                             where e.chain_id = t.chain_id and e.token_address = t.address and e.kind = 'earned') f on true`,
      chain ? [chain.chainId] : [],
    )
    const byAgent = new Map<string, { agentId: string; name: string; usd: bigint; tokens: number }>()
    for (const r of rows) {
      const a = byAgent.get(r.agent_id) ?? { agentId: r.agent_id, name: r.name, usd: 0n, tokens: 0 }
      byAgent.set(r.agent_id, a)
      const price = r.price === null ? null : BigInt(r.price)
      a.usd += valueOf(prices, { amount: BigInt(r.quote), asset: 'quote', quoteSymbol: r.quote_symbol, price }) ?? 0n
      a.usd += valueOf(prices, { amount: BigInt(r.token), asset: 'token', quoteSymbol: r.quote_symbol, price }) ?? 0n
      a.tokens++
    }
    const ranked = [...byAgent.values()].sort(
      (x, y) => (x.usd === y.usd ? 0 : x.usd > y.usd ? -1 : 1) || y.tokens - x.tokens || (x.agentId < y.agentId ? -1 : 1),
    )
    return { ranked, indexedBlock: await indexedBlock(pool, chain?.chainId) }
  }

  /** Agents, running agents, tokens launched, 24 h volume and creator fees earned (USD). */
  async function platformStats() {
    const prices = await quotePrices(chain)
    const chainFilter = chain ? 'and t.chain_id = $1' : ''
    const params = chain ? [chain.chainId] : []
    const [agents, tokens, volume, fees] = await Promise.all([
      pool.query<{ agents: string; running: string }>(
        `select count(*) filter (where x.status <> 'deleted')::text as agents, count(*) filter (where x.status = 'running')::text as running
           from agent a join actor x on x.id = a.id::text`,
      ),
      pool.query<{ launched: string; indexed: string }>(
        `select count(*) filter (where t.creator_agent_id is not null)::text as launched, count(*)::text as indexed
           from token t where true ${chainFilter}`,
        params,
      ),
      pool.query<{ quote_symbol: string; volume: string; trades: string }>(
        `select t.quote_symbol, sum(tr.quote_amount)::text as volume, count(*)::text as trades
           from trade tr join token t on t.address = tr.token_address
          where tr.at > now() - interval '24 hours' ${chainFilter} group by t.quote_symbol`,
        params,
      ),
      pool.query<{ quote_symbol: string; quote: string; token: string; price: string | null }>(
        `select t.quote_symbol, f.quote::text, f.token::text, case when f.token > 0 then ${LATEST_PRICE_SQL} end::text as price
           from token t
           join lateral (select sum(e.quote_amount) as quote, sum(e.token_amount) as token from creator_fee_event e
                          where e.chain_id = t.chain_id and e.token_address = t.address and e.kind = 'earned') f on true
          where t.creator_agent_id is not null and f.quote is not null ${chainFilter}`,
        params,
      ),
    ])
    let volumeUsd = 0n
    let trades = 0
    for (const v of volume.rows) {
      volumeUsd += valueOf(prices, { amount: BigInt(v.volume), asset: 'quote', quoteSymbol: v.quote_symbol, price: null }) ?? 0n
      trades += Number(v.trades)
    }
    let feesUsd = 0n
    for (const f of fees.rows) {
      const price = f.price === null ? null : BigInt(f.price)
      feesUsd += valueOf(prices, { amount: BigInt(f.quote), asset: 'quote', quoteSymbol: f.quote_symbol, price }) ?? 0n
      feesUsd += valueOf(prices, { amount: BigInt(f.token), asset: 'token', quoteSymbol: f.quote_symbol, price }) ?? 0n
    }
    return {
      agents: Number(agents.rows[0]!.agents),
      runningAgents: Number(agents.rows[0]!.running),
      tokensLaunched: Number(tokens.rows[0]!.launched),
      tokensIndexed: Number(tokens.rows[0]!.indexed),
      trades24h: trades,
      volume24hUsd: formatUsd(volumeUsd),
      feesEarnedUsd: formatUsd(feesUsd),
      indexedBlock: await indexedBlock(pool, chain?.chainId),
    }
  }
}
