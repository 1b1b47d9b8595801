import { describe, expect, it } from 'vitest'
import { largeTransfers, liquidityMoves, severityOf, volumeSpikes, whaleSwaps } from './anomalyRules.ts'

describe('anomaly rules', () => {
  it('severity: 0.5 at the threshold, 1 at ten times it', () => {
    expect(severityOf(1)).toBe(0.5)
    expect(severityOf(10)).toBe(1)
    expect(severityOf(100)).toBe(1)
  })
  it('a swap worth the whale threshold is one, below is none', () => {
    const base = { txHash: '0xa', logIndex: 1, blockNumber: 5, token: '0xt', symbol: 'CAT', side: 'buy', trader: '0xw' }
    const out = whaleSwaps([{ ...base, usd: 15_000 }, { ...base, logIndex: 2, usd: 9_999 }, { ...base, logIndex: 3, usd: null }])
    expect(out).toHaveLength(1)
    expect(out[0]).toMatchObject({ type: 'whale_movement', key: 'whale:0xa:1', mints: ['0xt'], blockNumber: 5, details: { valueUsd: 15000 } })
  })
  it('a real quote reserve moving 25% in a block is a spike; less is not', () => {
    const p = (blockNumber: number, t: bigint, q: bigint) => ({ token: '0xt', symbol: 'CAT', source: 'pool', blockNumber, tokenReserve: t, quoteReserve: q })
    const before = new Map([['0xt', p(1, 1000n, 1000n)]])
    expect(liquidityMoves(before, [p(2, 800n, 1200n)])).toEqual([])
    expect(liquidityMoves(new Map([['0xt', { ...p(1, 1000n, 1000n), source: 'curve' }]]), [p(2, 800n, 100n)])).toEqual([])
    const pulled = liquidityMoves(before, [p(3, 2000n, 500n)])
    expect(pulled).toHaveLength(1)
    expect(pulled[0]).toMatchObject({ type: 'liquidity_spike', blockNumber: 3, details: { changePct: -50 } })
    // Only the block's net move counts: added and pulled within one block is none.
    expect(liquidityMoves(before, [p(4, 2000n, 2000n), p(4, 1000n, 1000n)])).toEqual([])
  })
  it('volume five times the trailing mean, given three blocks of history', () => {
    const b = (blockNumber: number, volume: bigint) => ({ token: '0xt', symbol: 'CAT', blockNumber, volume })
    expect(volumeSpikes(new Map([['0xt', [10n, 10n]]]), [b(9, 1000n)])).toEqual([])
    // 49 is under 5 x 10; then the mean of 49, 10, 10, 10 is 19.75 and 200 is over 5 x that.
    const out = volumeSpikes(new Map([['0xt', [10n, 10n, 10n]]]), [b(9, 49n), b(10, 200n)])
    expect(out.map((a) => a.blockNumber)).toEqual([10])
  })
  it('large transfers by USD', () => {
    expect(largeTransfers([{ txHash: '0xb', logIndex: 0, blockNumber: 3, asset: 'USDC', to: '0xd', usd: 20_000 }])[0]).toMatchObject({ type: 'large_transfer', mints: ['USDC'] })
  })
})
