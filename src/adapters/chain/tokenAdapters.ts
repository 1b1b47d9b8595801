import type { Logger } from '../../logger.ts'
import type { ChainHandle } from './chain.ts'
import type { Deployment, QuotePrices, TokenPrices } from '../../domain/tokens/ports.ts'
import { pegUsd18 } from '../../domain/tokens/priceMath.ts'
import { ChainNotConfiguredError } from '../../domain/errors.ts'
import { createPriceReader } from './priceReader.ts'

/** How long quote asset USD prices (one pool read for ETH) are reused by the token board. */
const QUOTE_PRICE_TTL_MS = 2000

/**
 * The chain side of the token ports: the deployment's tokens from its manifest and prices read
 * at one block. Without a chain there is no deployment, quote assets have no price and every
 * on-chain read refuses with 503 `chain_unavailable`.
 *
 * @example
 * const prices = createTokenPrices({ chain, logger })
 * const at = await prices.atLatestBlock()
 */
export function createTokenPrices({ chain, logger }: { chain: ChainHandle | undefined; logger: Logger }): TokenPrices {
  let quoteCache: { at: number; prices: Promise<Map<string, bigint>> } | undefined

  async function quotePrices(): Promise<QuotePrices> {
    const usd18 = new Map<string, bigint>()
    const decimals = new Map<string, number>()
    if (!chain) return { block: null, usd18, decimals }
    const reader = await createPriceReader(chain)
    for (const [symbol, q] of Object.entries(chain.manifest.quoteAssets)) {
      decimals.set(symbol, q.decimals)
      const p = await reader.quote(symbol)
      if (p) usd18.set(symbol, p.usd18)
    }
    return { block: reader.block, usd18, decimals }
  }

  return {
    deployment: chain && deploymentOf(chain),
    atLatestBlock() {
      if (!chain) return Promise.reject(new ChainNotConfiguredError())
      return createPriceReader(chain)
    },
    quotePrices,
    quoteUsdOrPeg() {
      if (!chain) return Promise.resolve(new Map())
      if (quoteCache && Date.now() - quoteCache.at < QUOTE_PRICE_TTL_MS) return quoteCache.prices
      const prices = quotePrices().then(
        (q) => q.usd18,
        (err) => {
          logger.warn({ err: String(err) }, 'quote asset prices unavailable; only pegged assets are priced')
          return new Map(Object.keys(chain.manifest.quoteAssets).flatMap((symbol) => {
            const peg = pegUsd18(symbol)
            return peg === null ? [] : [[symbol, peg] as const]
          }))
        },
      )
      quoteCache = { at: Date.now(), prices }
      return prices
    },
    async liveMarket({ chainId, ...t }) {
      if (!chain || chain.chainId !== chainId) return undefined
      try {
        return await (await createPriceReader(chain)).market(t)
      } catch (err) {
        logger.debug({ err: String(err), token: t.address }, 'live market read failed; using the indexed state')
        return undefined
      }
    },
  }
}

/** The deployment as the domain reads it: addresses lower case, the quote assets, the venues' quotes, the stocks. */
export function deploymentOf(chain: ChainHandle): Deployment {
  const m = chain.manifest
  return {
    chainId: chain.chainId,
    weth: m.contracts.weth.toLowerCase(),
    usdc: m.contracts.usdc.toLowerCase(),
    wethUsdcPair: m.contracts.wethUsdcPair.toLowerCase(),
    quoteAssets: m.quoteAssets,
    venueQuotes: m.quotes,
    stocks: m.stocks,
  }
}
