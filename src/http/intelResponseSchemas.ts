import { z } from 'zod'

/**
 * Response shapes of the market-intelligence routes and of GET /portfolio (the reference
 * client's), for the OpenAPI document (src/http/openapi.ts). Numbers are JSON numbers.
 */

const num = z.number()
const usdOrNull = z.number().nullable().describe('USD; null when the quote asset had no USD price')
const isoTime = z.string().describe('ISO 8601, UTC')

export const candlesResponse = z.object({
  address: z.string(), symbol: z.string(), quote: z.string(), interval: z.string(), from: isoTime, to: isoTime,
  candles: z.array(z.object({
    time: isoTime, timestamp: z.number().int().describe('Bucket start, Unix seconds'),
    open: num, high: num, low: num, close: num.describe('Quote asset per whole token'),
    openUsd: usdOrNull, highUsd: usdOrNull, lowUsd: usdOrNull, closeUsd: usdOrNull,
    volume: num.describe('Whole tokens'), volumeQuote: num, volumeUsd: usdOrNull, trades: z.number().int(),
  })),
})

export const indicatorsResponse = z.object({
  mint: z.string(), address: z.string(), symbol: z.string(), timeframe: z.string(),
  basis: z.enum(['usd', 'quote']).describe('What the closes are in'), candles: z.number().int(),
  indicators: z.array(z.union([
    z.object({ indicator: z.literal('rsi'), value: num, signal: z.enum(['overbought', 'oversold', 'neutral']), period: z.number().int() }),
    z.object({ indicator: z.enum(['ema', 'sma']), value: num, period: z.number().int() }),
    z.object({ indicator: z.literal('macd'), macd: num, signal: num, histogram: num, trend: z.enum(['bullish', 'bearish']) }),
  ])),
})

export const topMoversResponse = z.object({
  timeframe: z.string(), sortBy: z.string(),
  movers: z.array(z.object({
    mint: z.string(), symbol: z.string(), name: z.string(), price: num.describe('USD'), change: num.nullable().describe('A decimal: 0.125 = +12.5%'),
    volume: num.describe('USD in the timeframe'), marketCap: num.nullable().describe('USD; null for WETH and the stocks, as on /price'), liquidity: num.describe('USD: twice the real quote reserve'),
  })),
})

export const anomaliesResponse = z.object({
  timeframe: z.string(),
  anomalies: z.array(z.object({
    type: z.enum(['whale_movement', 'liquidity_spike', 'volume_anomaly', 'large_transfer']), mints: z.array(z.string()), description: z.string(),
    severity: num.describe('0-1'), detectedAt: isoTime.describe('Time of the block that showed it'), details: z.record(z.string(), z.unknown()),
  })),
})

export const yieldResponse = z.object({
  opportunities: z.array(z.object({
    protocol: z.string(), pool: z.string(), tokens: z.array(z.string()), apy: num.describe('Percent'), tvl: num.describe('USD'),
    risk: z.enum(['low', 'medium', 'high']), type: z.string(), mint: z.string(),
  })),
})

export const macroResponse = z.object({
  signals: z.array(z.object({ category: z.string(), signal: z.string(), value: num, sentiment: z.enum(['bullish', 'bearish', 'neutral']), updatedAt: isoTime })),
})

const pnlNumbers = { costBasisUsd: num.nullable(), unrealisedPnlUsd: num.nullable(), realisedPnlUsd: num.nullable() }
export const walletPortfolioResponse = z.object({
  wallet: z.string(), agentId: z.string(), totalValueUsd: num,
  holdings: z.array(z.object({
    mint: z.string().nullable().describe('null for native ETH'), symbol: z.string(), name: z.string(),
    balance: num.describe('Base units (past 2^53 a JSON number loses precision; GET /wallet/portfolio has the exact figure)'),
    uiBalance: num, valueUsd: num.nullable(), priceUsd: num.nullable(), change24h: num.nullable(), ...pnlNumbers,
  })),
  costBasisUsd: num, unrealisedPnlUsd: num, realisedPnlUsd: num.describe('Net of gas'), gasUsd: num,
})
