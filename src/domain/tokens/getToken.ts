import { NotFoundError } from '../errors.ts'
import { PRICE_SCALE } from './priceMath.ts'
import type { IndexedTokenState, TokenMarket, TokenPorts, TokenRow } from './ports.ts'
import type { GetTokenInput } from './tokens.schema.ts'
import { tokenAddress } from './tokens.schema.ts'
import { quoteUsd, tokenFigures } from './tokenFigures.ts'
import { percent, tokenView } from './tokenResource.ts'

export type GetTokenDeps = Pick<TokenPorts, 'prices' | 'board'>

/** The market a token answer shows: read on chain now, or the last indexed snapshot (`asOfBlock`). */
type MarketView = Omit<TokenMarket, 'source' | 'sourceType' | 'graduationThreshold'> & { source: 'chain' | 'index'; blockNumber: number | null }

/** A token of the board by address, or 404 (an address that is not one is not found either). */
export async function findToken(deps: Pick<TokenPorts, 'board'>, address: string | undefined): Promise<TokenRow> {
  const parsed = tokenAddress.safeParse(address)
  const t = parsed.success ? await deps.board.find(parsed.data) : undefined
  if (!t) throw new NotFoundError('Token')
  return t
}

/**
 * One token: its board fields and figures, description and launch, its market (curve or pool
 * reserves and price, from the chain now, or the indexed snapshot when the chain cannot be read),
 * its curve's progress toward graduation (venue-a) and its creator fees from the index.
 *
 * @example
 * const token = await getToken(deps, { address: '0xabc…' })
 */
export async function getToken(deps: GetTokenDeps, input: GetTokenInput) {
  const t = await findToken(deps, input.address)
  const [indexed, prices, live] = await Promise.all([
    deps.board.indexedState(t),
    deps.prices.quoteUsdOrPeg(),
    deps.prices.liveMarket({ chainId: t.chain_id, address: t.address, venue: t.venue, quoteSymbol: t.quote_symbol, poolAddress: t.pool_address }),
  ])
  const market: MarketView | null = live ? { ...live, source: 'chain', blockNumber: null } : indexedMarket(t, indexed.snapshot)
  const sum = (kind: string) => indexed.fees.find((r) => r.kind === kind) ?? { quote: '0', token: '0' }
  const earned = sum('earned')
  const claimed = sum('claimed')
  const threshold = t.graduation_threshold === null ? null : BigInt(t.graduation_threshold)
  const decimals = deps.prices.deployment?.quoteAssets[t.quote_symbol]?.decimals
  const usd = prices.get(t.quote_symbol) ?? null
  return {
    ...tokenView(t),
    ...tokenFigures({
      totalSupply: BigInt(t.total_supply),
      price: market?.price ?? null,
      price24hAgo: indexed.volume.price_24h_ago === null ? null : BigInt(indexed.volume.price_24h_ago),
      volume24h: BigInt(indexed.volume.volume),
      quoteDecimals: decimals,
      quoteUsd18: usd,
    }),
    description: t.description,
    logoUrl: t.logo_url,
    launchId: t.launch_id,
    launchTxHash: t.tx_hash,
    indexed: t.indexed_block !== null,
    trades24h: Number(indexed.volume.trades),
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
            progressPercent: t.graduated ? '100' : market?.phase === 'curve' && threshold ? percent(market.quoteReserve, threshold) : null,
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
  }
}

/** The market from the last indexed snapshot: virtual reserves from the token row (curve: quote only). */
function indexedMarket(t: TokenRow, snap: IndexedTokenState['snapshot']): MarketView | null {
  if (!snap) return null
  const curve = snap.source === 'curve'
  const vq = BigInt((curve ? t.curve_virtual_quote : t.pool_virtual_quote) ?? 0)
  const vt = curve ? 0n : BigInt(t.pool_virtual_token ?? 0)
  return {
    source: 'index', phase: snap.source, tokenReserve: BigInt(snap.token_reserve), quoteReserve: BigInt(snap.quote_reserve),
    effectiveTokenReserve: BigInt(snap.token_reserve) + vt, effectiveQuoteReserve: BigInt(snap.quote_reserve) + vq,
    price: BigInt(snap.price), blockNumber: Number(snap.block_number),
  }
}
