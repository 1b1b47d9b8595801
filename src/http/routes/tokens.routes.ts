import { Router } from '@koa/router'
import { z } from 'zod'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { limitQuery, parse, rejectQuery } from '../validate.ts'
import { ChainNotConfiguredError, NotFoundError, ValidationError } from '../../domain/errors.ts'
import { PRICE_SCALE } from '../../domain/tokens/priceMath.ts'
import { createPriceReader } from '../../chain/priceReader.ts'
import { pegUsd18 } from '../../domain/tokens/priceMath.ts'
import { LATEST_PRICE_SQL, quotePrices as readQuotePrices } from '../../domain/fees/feeValuation.ts'
import { PRICE_24H_AGO_SQL, quoteUsd, tokenFigures, VOLUME_24H_SQL } from '../../domain/fees/tokenFigures.ts'

export const quotesQuery = z.strictObject({ venue: z.enum(['venue-a', 'venue-b'], 'One of venue-a, venue-b.') })
export const boardQuery = z.strictObject({
  limit: limitQuery,
  cursor: z.string().max(200).optional(),
  venue: z.enum(['venue-a', 'venue-b', 'self-funded']).optional(),
})
export const tradesQuery = z.strictObject({
  limit: limitQuery,
  cursor: z.string().max(200).optional(),
  ours: z.enum(['true', 'false'], 'Must be true or false.').optional(),
})
const addressParam = z.string().regex(/^0x[0-9a-fA-F]{40}$/).transform((a) => a.toLowerCase())

/** How long quote asset USD prices (one pool read for ETH) are reused. */
const QUOTE_PRICE_TTL_MS = 2000

function decodeTupleCursor<T>(cursor: string, schema: z.ZodType<T>): T {
  try {
    return schema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString()))
  } catch {
    throw new ValidationError({ cursor: 'Invalid cursor.' })
  }
}
const encodeTupleCursor = (v: unknown[]) => Buffer.from(JSON.stringify(v)).toString('base64url')

/**
 * Public token data: the board (prices, market caps, 24 h volume and change), one token with its curve or
 * pool state and creator fees, its trades, and the quote assets of each venue. Token, trade and
 * market data come from the chain indexer's tables; USD values use the quote asset's price.
 */
export function tokenRoutes(deps: AppDeps): Router {
  const router = new Router()
  const chain = () => {
    if (!deps.chain) throw new ChainNotConfiguredError()
    return deps.chain
  }

  let quoteCache: { at: number; prices: Promise<Map<string, bigint>> } | undefined
  /**
   * USD price (usd18) per quote symbol, read at one block and kept 2 s. A symbol without a price
   * is absent; when the chain cannot be read, only pegged assets (USDC) are priced.
   */
  function quotePrices(): Promise<Map<string, bigint>> {
    if (!deps.chain) return Promise.resolve(new Map())
    if (quoteCache && Date.now() - quoteCache.at < QUOTE_PRICE_TTL_MS) return quoteCache.prices
    const symbols = Object.keys(deps.chain.manifest.quoteAssets)
    const prices = readQuotePrices(deps.chain).then(
      (q) => q.usd18,
      (err) => {
        deps.logger.warn({ err: String(err) }, 'quote asset prices unavailable; only pegged assets are priced')
        return new Map(symbols.flatMap((symbol) => {
          const peg = pegUsd18(symbol)
          return peg === null ? [] : [[symbol, peg] as const]
        }))
      },
    )
    quoteCache = { at: Date.now(), prices }
    return prices
  }

  const quoteDecimals = (symbol: string) => deps.chain?.manifest.quoteAssets[symbol]?.decimals

  /** Price, USD and 24 h figures of a token from a price (PRICE_SCALE) and its quote asset. */
  function valuation(t: TokenRow, figures: { price: bigint | null; price24hAgo: string | null; volume: bigint }, prices: Map<string, bigint>) {
    return tokenFigures({
      totalSupply: BigInt(t.total_supply),
      price: figures.price,
      price24hAgo: figures.price24hAgo === null ? null : BigInt(figures.price24hAgo),
      volume24h: figures.volume,
      quoteDecimals: quoteDecimals(t.quote_symbol),
      quoteUsd18: prices.get(t.quote_symbol) ?? null,
    })
  }

  router.get('/quotes', (ctx) => {
    const { venue } = parse(quotesQuery, ctx.query)
    const { manifest } = chain()
    // Popular first: ETH, then USDC, then anything else the venue accepts.
    const order = ['ETH', 'USDC']
    const rank = (s: string) => (order.includes(s) ? order.indexOf(s) : order.length)
    const symbols = [...(manifest.quotes[venue] ?? [])].sort((a, b) => rank(a) - rank(b))
    ok(ctx, {
      venue,
      quotes: symbols.map((symbol) => {
        const q = manifest.quoteAssets[symbol]!
        return { symbol, address: q.address.toLowerCase(), decimals: q.decimals, native: q.native, logoUrl: quoteLogo(symbol) }
      }),
    })
  })

  router.get('/tokens', async (ctx) => {
    const q = parse(boardQuery, ctx.query)
    const params: unknown[] = [q.limit + 1]
    const where: string[] = []
    if (deps.chain) where.push(`t.chain_id = $${params.push(deps.chain.chainId)}`)
    if (q.venue) where.push(`t.venue = $${params.push(q.venue)}`)
    if (q.cursor) {
      const c = decodeTupleCursor(q.cursor, z.tuple([z.number().int(), z.string().max(42)]))
      where.push(`(t.block_number, t.address) < ($${params.push(c[0])}, $${params.push(c[1])})`)
    }
    const [{ rows }, prices] = await Promise.all([
      deps.pool.query<BoardRow>(
        `select t.*, a.name as agent_name, ${LATEST_PRICE_SQL}::text as price, ${VOLUME_24H_SQL}::text as volume_24h,
                ${PRICE_24H_AGO_SQL}::text as price_24h_ago
           from token t
           left join agent a on a.id = t.creator_agent_id
          ${where.length ? `where ${where.join(' and ')}` : ''}
          order by t.block_number desc, t.address desc limit $1`,
        params,
      ),
      quotePrices(),
    ])
    const page = rows.slice(0, q.limit)
    const last = page.at(-1)
    ok(ctx, {
      tokens: page.map((t) => ({
        ...tokenView(t),
        ...valuation(t, { price: t.price === null ? null : BigInt(t.price), price24hAgo: t.price_24h_ago, volume: BigInt(t.volume_24h) }, prices),
      })),
      nextCursor: rows.length > q.limit && last ? encodeTupleCursor([Number(last.block_number), last.address]) : null,
    })
  })

  async function loadToken(address: string | undefined): Promise<TokenRow> {
    const parsed = addressParam.safeParse(address)
    if (!parsed.success) throw new NotFoundError('Token')
    const { rows } = await deps.pool.query<TokenRow>(
      `select t.*, a.name as agent_name from token t left join agent a on a.id = t.creator_agent_id where t.address = $1`,
      [parsed.data],
    )
    if (!rows[0]) throw new NotFoundError('Token')
    return rows[0]
  }

  router.get('/tokens/:address', rejectQuery, async (ctx) => {
    const t = await loadToken((ctx.params as { address?: string }).address)
    const [indexed, fees, volume, prices] = await Promise.all([
      deps.pool.query<{ source: 'curve' | 'pool'; token_reserve: string; quote_reserve: string; price: string; block_number: string }>(
        `select source, token_reserve, quote_reserve, price, block_number from token_snapshot
          where chain_id = $1 and token_address = $2 order by block_number desc, log_index desc limit 1`,
        [t.chain_id, t.address],
      ),
      deps.pool.query<{ kind: string; quote: string; token: string }>(
        `select kind, coalesce(sum(quote_amount), 0)::text as quote, coalesce(sum(token_amount), 0)::text as token
           from creator_fee_event where chain_id = $1 and token_address = $2 group by kind`,
        [t.chain_id, t.address],
      ),
      deps.pool.query<{ volume: string; trades: string; price_24h_ago: string | null }>(
        `select ${VOLUME_24H_SQL}::text as volume, ${PRICE_24H_AGO_SQL}::text as price_24h_ago,
                (select count(*) from trade tr where tr.token_address = t.address and tr.at > now() - interval '24 hours')::text as trades
           from token t where t.address = $1 and t.chain_id = $2`,
        [t.address, t.chain_id],
      ),
      quotePrices(),
    ])

    // The market as the chain has it now; the indexed snapshot when the chain cannot be read.
    let market: MarketView | null = null
    if (deps.chain && deps.chain.chainId === t.chain_id) {
      try {
        const prices = await createPriceReader(deps.chain)
        const m = await prices.market({ address: t.address, venue: t.venue, quoteSymbol: t.quote_symbol, poolAddress: t.pool_address })
        market = {
          source: 'chain', phase: m.phase, tokenReserve: m.tokenReserve, quoteReserve: m.quoteReserve,
          effectiveTokenReserve: m.effectiveTokenReserve, effectiveQuoteReserve: m.effectiveQuoteReserve, price: m.price, blockNumber: null,
        }
      } catch (err) {
        deps.logger.debug({ err: String(err), token: t.address }, 'live market read failed; using the indexed state')
      }
    }
    const snap = indexed.rows[0]
    if (!market && snap) {
      const curve = snap.source === 'curve'
      const vq = BigInt((curve ? t.curve_virtual_quote : t.pool_virtual_quote) ?? 0)
      const vt = curve ? 0n : BigInt(t.pool_virtual_token ?? 0)
      market = {
        source: 'index', phase: snap.source, tokenReserve: BigInt(snap.token_reserve), quoteReserve: BigInt(snap.quote_reserve),
        effectiveTokenReserve: BigInt(snap.token_reserve) + vt, effectiveQuoteReserve: BigInt(snap.quote_reserve) + vq,
        price: BigInt(snap.price), blockNumber: Number(snap.block_number),
      }
    }

    const sum = (kind: string) => fees.rows.find((r) => r.kind === kind) ?? { quote: '0', token: '0' }
    const earned = sum('earned')
    const claimed = sum('claimed')
    const threshold = t.graduation_threshold === null ? null : BigInt(t.graduation_threshold)
    const decimals = quoteDecimals(t.quote_symbol)
    const usd = prices.get(t.quote_symbol) ?? null
    ok(ctx, {
      ...tokenView(t),
      ...valuation(t, { price: market?.price ?? null, price24hAgo: volume.rows[0]!.price_24h_ago, volume: BigInt(volume.rows[0]!.volume) }, prices),
      description: t.description,
      logoUrl: t.logo_url,
      launchId: t.launch_id,
      launchTxHash: t.tx_hash,
      indexed: t.indexed_block !== null,
      trades24h: Number(volume.rows[0]!.trades),
      market: market && {
        source: market.source,
        phase: market.phase,
        tokenReserve: market.tokenReserve.toString(),
        quoteReserve: market.quoteReserve.toString(),
        effectiveTokenReserve: market.effectiveTokenReserve.toString(),
        effectiveQuoteReserve: market.effectiveQuoteReserve.toString(),
        price: market.price.toString(),
        priceScale: PRICE_SCALE.toString(),
        asOfBlock: market.blockNumber,
      },
      curve:
        t.venue === 'venue-a'
          ? {
              virtualQuoteReserve: t.curve_virtual_quote,
              graduationThreshold: t.graduation_threshold,
              quoteReserve: t.graduated ? t.graduation_threshold : market?.phase === 'curve' ? market.quoteReserve.toString() : null,
              progressPercent: t.graduated
                ? '100'
                : market?.phase === 'curve' && threshold
                  ? percent(market.quoteReserve, threshold)
                  : null,
              graduatedBlock: t.graduated_block === null ? null : Number(t.graduated_block),
            }
          : null,
      creatorFees: {
        quote: t.quote_symbol,
        earned: { quote: earned.quote, token: earned.token },
        claimed: { quote: claimed.quote, token: claimed.token },
        unclaimed: { quote: (BigInt(earned.quote) - BigInt(claimed.quote)).toString(), token: (BigInt(earned.token) - BigInt(claimed.token)).toString() },
        earnedQuoteUsd: quoteUsd(BigInt(earned.quote), decimals, usd),
      },
    })
  })

  router.get('/tokens/:address/trades', async (ctx) => {
    const q = parse(tradesQuery, ctx.query)
    const t = await loadToken((ctx.params as { address?: string }).address)
    const params: unknown[] = [q.limit + 1, t.address]
    const where = ['tr.token_address = $2']
    if (q.ours !== undefined) where.push(`tr.ours = $${params.push(q.ours === 'true')}`)
    if (q.cursor) {
      const c = decodeTupleCursor(q.cursor, z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]))
      where.push(`(tr.block_number, tr.log_index) < ($${params.push(c[0])}, $${params.push(c[1])})`)
    }
    const [{ rows }, prices] = await Promise.all([
      deps.pool.query<TradeRow>(
        `select tr.*, a.id as agent_id from trade tr left join agent a on a.wallet_address = tr.trader
          where ${where.join(' and ')} order by tr.block_number desc, tr.log_index desc limit $1`,
        params,
      ),
      quotePrices(),
    ])
    const page = rows.slice(0, q.limit)
    const last = page.at(-1)
    const decimals = quoteDecimals(t.quote_symbol)
    const usd = prices.get(t.quote_symbol) ?? null
    ok(ctx, {
      token: t.address,
      quote: t.quote_symbol,
      trades: page.map((r) => ({
        txHash: r.tx_hash,
        logIndex: r.log_index,
        blockNumber: Number(r.block_number),
        at: new Date(r.at).toISOString(),
        trader: r.trader,
        agentId: r.agent_id,
        ours: r.ours,
        side: r.side,
        source: r.source,
        quoteAmount: r.quote_amount,
        tokenAmount: r.token_amount,
        creatorFee: r.creator_fee,
        platformFee: r.platform_fee,
        feeAsset: r.fee_asset,
        priceAfter: r.price_after,
        quoteAmountUsd: quoteUsd(BigInt(r.quote_amount), decimals, usd),
      })),
      nextCursor: rows.length > q.limit && last ? encodeTupleCursor([Number(last.block_number), last.log_index]) : null,
    })
  })
  return router
}

/** part / whole as a percentage with two decimals, capped at 100. */
function percent(part: bigint, whole: bigint): string {
  if (whole === 0n) return '0.00'
  let bp = (part * 10_000n) / whole
  if (bp > 10_000n) bp = 10_000n
  const s = bp.toString().padStart(3, '0')
  return `${s.slice(0, -2)}.${s.slice(-2)}`
}

type MarketView = {
  source: 'chain' | 'index'
  phase: 'curve' | 'pool'
  tokenReserve: bigint
  quoteReserve: bigint
  effectiveTokenReserve: bigint
  effectiveQuoteReserve: bigint
  price: bigint
  blockNumber: number | null
}

type TokenRow = {
  address: string
  chain_id: number
  symbol: string
  name: string
  venue: string
  quote_symbol: string
  creator_address: string
  creator_agent_id: string | null
  agent_name: string | null
  launch_id: string | null
  pool_address: string | null
  graduated: boolean
  graduated_block: string | null
  verified: boolean
  total_supply: string
  description: string | null
  logo_url: string | null
  block_number: string
  tx_hash: string
  indexed_block: string | null
  curve_virtual_quote: string | null
  graduation_threshold: string | null
  pool_virtual_token: string | null
  pool_virtual_quote: string | null
  created_at: string | Date
}

type BoardRow = TokenRow & { price: string | null; volume_24h: string; price_24h_ago: string | null }

type TradeRow = {
  tx_hash: string
  log_index: number
  block_number: string
  at: string | Date
  trader: string
  agent_id: string | null
  ours: boolean
  side: string
  source: string
  quote_amount: string
  token_amount: string
  creator_fee: string
  platform_fee: string
  fee_asset: string
  price_after: string | null
}

function tokenView(t: TokenRow) {
  return {
    address: t.address,
    symbol: t.symbol,
    name: t.name,
    venue: t.venue,
    quote: t.quote_symbol,
    creatorAddress: t.creator_address,
    creatorAgent: t.creator_agent_id ? { id: t.creator_agent_id, name: t.agent_name } : null,
    poolAddress: t.pool_address,
    totalSupply: t.total_supply,
    graduated: t.graduated,
    verified: t.verified,
    logoUrl: t.logo_url,
    blockNumber: Number(t.block_number),
    createdAt: new Date(t.created_at).toISOString(),
  }
}

function quoteLogo(symbol: string): string {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><circle cx="32" cy="32" r="30" fill="${symbol === 'ETH' ? '#627eea' : '#2775ca'}"/><text x="32" y="38" font-size="14" text-anchor="middle" fill="#fff" font-family="sans-serif">${symbol}</text></svg>`
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`
}
