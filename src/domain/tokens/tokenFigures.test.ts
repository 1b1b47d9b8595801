import { describe, expect, it } from 'vitest'
import { tokenFigures } from './tokenFigures.ts'

const E18 = 10n ** 18n
/** 1.5 ETH of virtual reserve over 1e9 tokens: 1.5e-9 ETH per token, PRICE_SCALE. */
const open = (15n * E18 * E18 * E18) / (10n * 10n ** 9n * E18)
const base = { totalSupply: 10n ** 9n * E18, volume24h: E18 / 10n, quoteDecimals: 18, quoteUsd18: 3000n * E18 }

describe('tokenFigures', () => {
  it('prices, market cap and 24 h volume in USD; change against the price a day ago', () => {
    expect(tokenFigures({ ...base, price: (open * 9n) / 8n, price24hAgo: open })).toEqual({
      priceQuote: '0.0000000016875', priceUsd: '0.0000050625', marketCapUsd: '5062.50', volume24hUsd: '300.00', change24h: 12.5,
    })
  })

  it('a fall is negative, truncated to two decimals', () => {
    expect(tokenFigures({ ...base, price: (open * 2n) / 3n, price24hAgo: open }).change24h).toBe(-33.33)
    expect(tokenFigures({ ...base, price: open, price24hAgo: open }).change24h).toBe(0)
  })

  it('unknown prices give nulls; the change needs only the token prices', () => {
    expect(tokenFigures({ ...base, price: open, price24hAgo: null }).change24h).toBeNull()
    expect(tokenFigures({ ...base, price: null, price24hAgo: open })).toEqual({
      priceQuote: null, priceUsd: null, marketCapUsd: null, volume24hUsd: '300.00', change24h: null,
    })
    expect(tokenFigures({ ...base, price: (open * 3n) / 2n, price24hAgo: open, quoteUsd18: null })).toEqual({
      priceQuote: '0.00000000225', priceUsd: null, marketCapUsd: null, volume24hUsd: null, change24h: 50,
    })
  })
})
