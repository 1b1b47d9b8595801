import type { Address } from 'viem'
import { ChainNotConfiguredError, ValidationError } from '../errors.ts'
import { formatPrice } from './priceMath.ts'
import type { Deployment, LaunchedTokenFigures, PricePoint, PricesAtBlock, TokenPorts } from './ports.ts'
import type { GetPriceInput } from './tokens.schema.ts'
import { tokenFigures } from './tokenFigures.ts'

export type GetPriceDeps = Pick<TokenPorts, 'prices' | 'board'>

/** Most tokens one price request may name. */
export const MAX_PRICE_TOKENS = 50

/** Display names of the quote assets (the manifest has symbols only). */
const QUOTE_NAMES: Record<string, string> = { ETH: 'Ether', USDC: 'USD Coin' }

type Resolved =
  | { kind: 'quote'; symbol: string; name: string; address: string }
  | { kind: 'stock'; symbol: string; name: string; address: string; pair: Address; decimals: number }
  | ({ kind: 'launched' } & LaunchedTokenFigures)

/** A number for clients that read one (`price`, `volume24h`, `marketCap`) beside the exact decimal string. */
const asNumber = (decimal: string | null) => (decimal === null ? null : Number(decimal))

/**
 * USD prices of tokens named by symbol (ETH, WETH, USDC, stock tickers; any case) or address
 * (a stock's or a launched token's), all read at one block; launched tokens add their 24 h
 * change, volume and market cap from the index. 422 on `tokens` (and `mint` for the one-token
 * form) when none, too many, or unknown tokens are named.
 *
 * @example
 * const { prices, block } = await getPrice(deps, { tokens: ['ETH', 'TSLAx', '0xabc…'], field: 'tokens' })
 */
export async function getPrice(deps: GetPriceDeps, { tokens: wanted, field }: GetPriceInput) {
  const fieldErrors = (message: string): Record<string, string> => (field === 'mint' ? { mint: message, tokens: message } : { tokens: message })
  if (wanted.length === 0) throw new ValidationError(fieldErrors('Name at least one token: a symbol (ETH, USDC, TSLAx) or a token address.'))
  if (wanted.length > MAX_PRICE_TOKENS) throw new ValidationError(fieldErrors(`At most ${MAX_PRICE_TOKENS} tokens.`))
  const d = deps.prices.deployment
  if (!d) throw new ChainNotConfiguredError()
  const { found, unknown } = await resolve(deps, d, wanted)
  if (unknown.length > 0) {
    throw new ValidationError(fieldErrors(`Unknown token${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}. Use ETH, USDC, a stock symbol or a launched token's address.`))
  }
  const at = await deps.prices.atLatestBlock()
  const block = Number(at.block)
  const prices = await Promise.all(wanted.map((token) => priceOf(d, at, token, found.get(token)!, block)))
  return { prices, block }
}

async function priceOf(d: Deployment, at: PricesAtBlock, token: string, r: Resolved, block: number) {
  let point: { usd18: bigint | null; source: Address | null; sourceType: PricePoint['sourceType'] }
  let extra: Record<string, unknown> = {}
  // Market figures come from the indexer, which records launched tokens' trades only.
  let figures: { change24h: number | null; volume24hUsd: string | null; marketCapUsd: string | null } = {
    change24h: null, volume24hUsd: null, marketCapUsd: null,
  }
  if (r.kind === 'quote') point = (await at.quote(r.symbol))!
  else if (r.kind === 'stock') point = await at.stock({ address: r.address as Address, pair: r.pair, decimals: r.decimals })
  else {
    const m = await at.launched(r)
    point = m
    extra = { venue: r.venue, quote: r.quoteSymbol, phase: m.phase }
    figures = tokenFigures({
      totalSupply: r.totalSupply, price: m.price, price24hAgo: r.price24hAgo, volume24h: r.volume24h,
      quoteDecimals: d.quoteAssets[r.quoteSymbol]?.decimals, quoteUsd18: (await at.quote(r.quoteSymbol))?.usd18 ?? null,
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
}

/** Resolves symbols (ETH, WETH, USDC, stock tickers; any case) and addresses; unknown ones are collected. */
async function resolve(deps: Pick<TokenPorts, 'board'>, d: Deployment, wanted: string[]) {
  const found = new Map<string, Resolved>()
  const unknown: string[] = []
  const addresses: string[] = []
  for (const w of wanted) {
    const lower = w.toLowerCase()
    const stock = d.stocks.find((s) => s.symbol.toLowerCase() === lower || s.address.toLowerCase() === lower)
    if (lower === 'eth' || lower === 'weth' || lower === d.weth) {
      found.set(w, { kind: 'quote', symbol: 'ETH', name: QUOTE_NAMES.ETH!, address: d.weth })
    } else if (lower === 'usdc' || lower === d.usdc) {
      found.set(w, { kind: 'quote', symbol: 'USDC', name: QUOTE_NAMES.USDC!, address: d.usdc })
    } else if (stock) {
      found.set(w, { kind: 'stock', symbol: stock.symbol, name: stock.name, address: stock.address.toLowerCase(), pair: stock.pair, decimals: stock.decimals })
    } else if (/^0x[0-9a-f]{40}$/.test(lower)) {
      addresses.push(lower)
    } else {
      unknown.push(w)
    }
  }
  if (addresses.length > 0) {
    const byAddress = new Map((await deps.board.launched(d.chainId, addresses)).map((r) => [r.address, r]))
    for (const w of wanted) {
      const r = byAddress.get(w.toLowerCase())
      if (r && !found.has(w)) found.set(w, { kind: 'launched', ...r })
      else if (!r && /^0x[0-9a-fA-F]{40}$/.test(w) && !found.has(w)) unknown.push(w)
    }
  }
  return { found, unknown }
}
