import { ChainNotConfiguredError } from '../errors.ts'
import type { TokenPorts } from './ports.ts'
import type { ListQuoteAssetsInput } from './tokens.schema.ts'
import { quoteLogo } from './tokenResource.ts'

export type ListQuoteAssetsDeps = Pick<TokenPorts, 'prices'>

/** Popular first: ETH, then USDC, then anything else a venue accepts. */
const POPULAR = ['ETH', 'USDC']
const rank = (s: string) => (POPULAR.includes(s) ? POPULAR.indexOf(s) : POPULAR.length)

/**
 * The quote assets a venue accepts for launches, popular first, with address, decimals and logo.
 *
 * @example
 * await listQuoteAssets(deps, { venue: 'venue-a' }) // { venue, quotes: [{ symbol: 'ETH', … }, { symbol: 'USDC', … }] }
 */
export async function listQuoteAssets(deps: ListQuoteAssetsDeps, { venue }: ListQuoteAssetsInput) {
  const d = deps.prices.deployment
  if (!d) throw new ChainNotConfiguredError()
  const symbols = [...(d.venueQuotes[venue] ?? [])].sort((a, b) => rank(a) - rank(b))
  return {
    venue,
    quotes: symbols.map((symbol) => {
      const q = d.quoteAssets[symbol]!
      return { symbol, address: q.address.toLowerCase(), decimals: q.decimals, native: q.native, logoUrl: quoteLogo(symbol) }
    }),
  }
}
