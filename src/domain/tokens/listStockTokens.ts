import { ChainNotConfiguredError } from '../errors.ts'
import { formatPrice } from './priceMath.ts'
import type { TokenPorts } from './ports.ts'

export type ListStockTokensDeps = Pick<TokenPorts, 'prices'>

/**
 * The tokenized stocks of the deployment with their live USD price (from their USDC pools, at
 * one block), the price they were seeded at, and their logo.
 *
 * @example
 * const { stocks, block } = await listStockTokens(deps)
 */
export async function listStockTokens(deps: ListStockTokensDeps) {
  const d = deps.prices.deployment
  if (!d) throw new ChainNotConfiguredError()
  const at = await deps.prices.atLatestBlock()
  const block = Number(at.block)
  const stocks = await Promise.all(
    d.stocks.map(async (s) => {
      const p = await at.stock(s)
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
        block,
      }
    }),
  )
  return { stocks, block }
}
