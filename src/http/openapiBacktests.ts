import { backtestSchema } from '../domain/backtest/backtestPlan.ts'
import type { Op } from './openapiOp.ts'

const num = { type: 'number' }
const fill = {
  type: 'object',
  required: ['at', 'side', 'amountIn', 'amountOut', 'priceUsd'],
  properties: {
    at: { type: 'string', format: 'date-time', description: 'The candle (its start) at whose close it filled' },
    side: { enum: ['buy', 'sell'], description: 'buy: USDC into the token; sell: the token into USDC' },
    amountIn: num, amountOut: num, priceUsd: { type: 'number', description: "The candle's close" },
    slice: { type: 'integer', description: "A TWAP's slice, from 1" },
  },
}
const holdings = { type: 'object', additionalProperties: num, description: 'The token (by symbol) and USDC' }

/** `POST /backtests` (docs/api.md, "Backtests"). */
export function backtestOps(): Op[] {
  return [{
    method: 'post', path: '/backtests', auth: 'read', body: backtestSchema,
    summary: "Replay an automation's creation body (dca, limit, stop_loss, take_profit, trailing_stop, bracket, twap; no agent) over the indexed candles of its token: fills, PnL, max drawdown, buy and hold",
    response: {
      type: 'object',
      required: ['id', 'token', 'from', 'to', 'interval', 'candles', 'start', 'fills', 'skipped', 'final', 'pnlUsd', 'maxDrawdownPct', 'buyAndHold', 'assumptions'],
      properties: {
        id: { type: 'string', description: 'A digest of the inputs and the candles replayed: the same for the same inputs' },
        token: { type: 'object', properties: { address: { type: 'string' }, symbol: { type: 'string' } } },
        from: { type: 'string', format: 'date-time' }, to: { type: 'string', format: 'date-time' },
        interval: { type: 'string' }, candles: { type: 'integer', description: 'Candles replayed' },
        start: { type: 'object', properties: { holdings, valueUsd: num } },
        fills: { type: 'array', items: fill },
        skipped: { type: 'array', items: { type: 'object', properties: { at: { type: 'string', format: 'date-time' }, reason: { type: 'string' } } } },
        final: { type: 'object', properties: { holdings, valueUsd: num } },
        pnlUsd: num, maxDrawdownPct: num,
        buyAndHold: { type: 'object', properties: { pnlUsd: num, maxDrawdownPct: num } },
        assumptions: { type: 'object', additionalProperties: true },
      },
    },
  }]
}
