import { describe, expect, it } from 'vitest'
import { mirrorCycle, mirrorSwapArgs } from './mirrorKind.ts'

const swap = { id: 's1', tokenIn: '0xaaa', tokenOut: 'ETH', symbolIn: 'USDC', symbolOut: 'ETH', decimalsIn: 6, amountIn: '40000000', valueInUsd: '40.00', txHash: '0x1', confirmedAt: '2026-01-01T00:00:00.000Z' }
const params = { ratio: 0.5, maxPerTradeUsd: '25', maxDelaySeconds: 60 }
const at = (s: number) => Date.parse(swap.confirmedAt) + s * 1000

describe('mirror', () => {
  it('finds a loop through the mirrors there are, and none in a chain', () => {
    const edges = [{ follower: 'B', leader: 'A' }, { follower: 'C', leader: 'B' }]
    expect(mirrorCycle(edges, 'A', 'C')).toBe(true)
    expect(mirrorCycle(edges, 'A', 'B')).toBe(true)
    expect(mirrorCycle(edges, 'D', 'C')).toBe(false)
    expect(mirrorCycle(edges, 'A', 'A')).toBe(true)
  })

  // A ratio is kept to 6 decimals: 0.3333333 copies 333333 millionths (40 USDC -> 13.33332).
  it('copies at the ratio in base units, refuses over the cap and off the list, skips when late', () => {
    expect(mirrorSwapArgs(params, swap, at(1), { slippageBps: 100 })).toEqual({ args: { slippageBps: 100, tokenIn: '0xaaa', tokenOut: 'ETH', amountIn: '20' } })
    expect(mirrorSwapArgs({ ...params, ratio: 0.3333333 }, swap, at(1))).toEqual({ args: { tokenIn: '0xaaa', tokenOut: 'ETH', amountIn: '13.33332' } })
    expect(mirrorSwapArgs({ ...params, maxPerTradeUsd: '19.99' }, swap, at(1))).toMatchObject({ type: 'fire.failed', code: 'mirror_over_max_per_trade' })
    expect(mirrorSwapArgs({ ...params, tokens: ['USDC'] }, swap, at(1))).toMatchObject({ type: 'fire.failed', code: 'mirror_token_not_allowed' })
    expect(mirrorSwapArgs({ ...params, tokens: ['0xaaa', 'ETH'] }, swap, at(1))).toMatchObject({ args: { amountIn: '20', acknowledgeUnverified: true } })
    expect(mirrorSwapArgs(params, swap, at(61))).toMatchObject({ type: 'fire.skipped', counted: true, reason: expect.stringMatching(/^mirror_too_late/) })
    expect(mirrorSwapArgs({ ...params, ratio: 0.000001 }, { ...swap, amountIn: '1' }, at(1))).toMatchObject({ type: 'fire.failed', code: 'mirror_amount_too_small' })
  })
})
