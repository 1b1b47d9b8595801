import { describe, expect, it } from 'vitest'
import { maxDrawdownPct, simulate, swapAt } from './simulate.ts'
import { backtestPlan } from './backtestPlan.ts'

// A scripted series of 1-minute candles: closes 100, 110, 120, 90, 80, 105.
const candles = [100, 110, 120, 90, 80, 105].map((closeUsd, i) => ({ t: 1_800_000_000 + i * 60, closeUsd }))
const at = (i: number) => new Date((1_800_000_000 + i * 60) * 1000).toISOString()
const opts = { feeBps: 0, liquidityUsd: null, interval: 60 }

describe('backtest simulation (hand-computed)', () => {
  it('a stop-loss sells its share at the close of the first candle at or under its level, the fee taken off', () => {
    const r = simulate({ kind: 'stop_loss', priceUsd: 95, share: 0.5 }, candles, { ...opts, feeBps: 30, start: { token: 2, usdc: 0 } })
    // Candle 3 closes at 90: 1 token sold for 90 x (1 - 0.003) = 89.73.
    expect(r.fills).toEqual([{ at: at(3), side: 'sell', amountIn: 1, amountOut: 89.73, priceUsd: 90 }])
    // Values 200, 220, 240, 179.73, 169.73, 194.73: pnl -5.27; the worst fall 240 -> 169.73.
    expect(r.final).toEqual({ token: 1, usdc: 89.73, valueUsd: 194.73 })
    expect(r.pnlUsd).toBe(-5.27)
    expect(r.maxDrawdownPct).toBe(29.27916667)
    // Buy and hold: 200 in the token at 100: 210 at the end, worst 240 -> 160.
    expect(r.buyAndHold).toEqual({ pnlUsd: 10, maxDrawdownPct: 33.33333333 })
  })

  it('a DCA buys on its grid from the first candle, each tick at the close of its candle', () => {
    const r = simulate({ kind: 'dca', side: 'buy', amountPerRun: 10, everySeconds: 120, maxRuns: null }, candles, { ...opts, start: { token: 0, usdc: 30 } })
    expect(r.fills.map((f) => [f.at, f.amountIn, f.amountOut, f.priceUsd])).toEqual([[at(0), 10, 0.1, 100], [at(2), 10, 0.08333333333, 120], [at(4), 10, 0.125, 80]])
    expect(r.final.usdc).toBe(0)
  })

  it('a trailing stop follows the high and sells on the fall from it; a TWAP sells its slices; a limit fires once', () => {
    const trail = simulate({ kind: 'trailing_stop', trailPct: 20, share: 1 }, candles, { ...opts, start: { token: 1, usdc: 0 } })
    // High 120 at candle 2: level 96; candle 3's 90 fires.
    expect(trail.fills).toEqual([{ at: at(3), side: 'sell', amountIn: 1, amountOut: 90, priceUsd: 90 }])
    const twap = simulate({ kind: 'twap', side: 'sell', amountIn: 3, slices: 3, everySeconds: 60, maxPriceImpactBps: 10_000 }, candles, { ...opts, start: { token: 3, usdc: 0 } })
    expect(twap.fills.map((f) => [f.at, f.amountOut, f.slice])).toEqual([[at(0), 100, 1], [at(1), 110, 2], [at(2), 120, 3]])
    const limit = simulate({ kind: 'limit', side: 'buy', amountIn: 85, operator: 'lte', priceUsd: 85 }, candles, { ...opts, start: { token: 0, usdc: 100 } })
    expect(limit.fills).toEqual([{ at: at(4), side: 'buy', amountIn: 85, amountOut: 1.0625, priceUsd: 80 }])
  })

  it('prices a swap against a constant-product pool, and skips a TWAP slice over its impact', () => {
    // 100 USDC into a pool of 1,000 USDC at 100: 1 x 1000 / 1100 tokens, 909 bps kept back.
    expect(swapAt({ side: 'buy', amountIn: 100, price: 100, feeBps: 0, liquidityUsd: 1000 })).toEqual({ amountOut: 1000 / 1100, impactBps: 909 })
    const twap = simulate({ kind: 'twap', side: 'buy', amountIn: 300, slices: 3, everySeconds: 60, maxPriceImpactBps: 500 }, candles, { ...opts, liquidityUsd: 1000, start: { token: 0, usdc: 300 } })
    expect(twap.fills).toEqual([])
    expect(twap.skipped.map((s) => s.reason)).toEqual(['price_impact_exceeded: slice 1 909 bps', 'price_impact_exceeded: slice 2 909 bps', 'price_impact_exceeded: slice 3 909 bps'])
    expect(maxDrawdownPct([100, 50, 200, 150])).toBe(50)
  })

  it('plans a kind between a token and USDC, and refuses what it cannot replay', () => {
    const usdc = (r: string) => r === 'USDC'
    expect(backtestPlan({ name: 'x', kind: 'dca', dca: { tokenIn: 'USDC', tokenOut: 'TSLAx', amountPerRun: '10', everySeconds: 3600 } }, usdc, 3 * 3600))
      .toEqual({ plan: { kind: 'dca', side: 'buy', amountPerRun: 10, everySeconds: 3600, maxRuns: null }, token: 'TSLAx', need: { token: 0, usdc: 30 } })
    expect(() => backtestPlan({ name: 'x', kind: 'sniper', sniper: { quote: 'ETH', amountIn: '1', maxBuys: 1 } }, usdc, 60)).toThrow(expect.objectContaining({ code: 'backtest_unsupported' }))
    expect(() => backtestPlan({ name: 'x', kind: 'dca', dca: { tokenIn: 'ETH', tokenOut: 'TSLAx', amountPerRun: '1', everySeconds: 60 } }, usdc, 60)).toThrow(expect.objectContaining({ code: 'backtest_unsupported' }))
  })
})
