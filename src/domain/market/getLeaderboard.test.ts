import { describe, expect, it } from 'vitest'
import { getLeaderboard, rankAgents } from './getLeaderboard.ts'
import { createMemo } from '../util/memo.ts'
import type { QuotePrices } from '../tokens/ports.ts'
import type { MarketPorts, RankingRow } from './ports.ts'

const E18 = 10n ** 18n
const prices: QuotePrices = { block: 1n, usd18: new Map([['ETH', 3000n * E18], ['USDC', E18]]), decimals: new Map([['ETH', 18], ['USDC', 6]]) }
const row = (agentId: string, quote: bigint, extra: Partial<RankingRow> = {}): RankingRow => ({ agentId, name: agentId, quoteSymbol: 'USDC', quote, token: 0n, price: null, ...extra })

describe('the creator fee leaderboard', () => {
  it('ranks by USD earned, then tokens launched, then id; token-side fees at the token price', () => {
    const ranked = rankAgents(prices, [
      row('b', 1_000_000n),
      row('a', 1_000_000n),
      row('c', 0n, { quoteSymbol: 'ETH', token: 2n * E18, price: 10n ** 15n * E18 }), // 2 tokens at 0.001 ETH = $6
      row('d', 0n),
      row('d', 0n),
    ])
    expect(ranked.map((r) => [r.agentId, r.usd / 10n ** 16n, r.tokens])).toEqual([['c', 600n, 1], ['a', 100n, 1], ['b', 100n, 1], ['d', 0n, 2]])
  })

  it('pages the ranking and reads it once while it is fresh', async () => {
    let reads = 0
    const deps: MarketPorts = {
      prices: { deployment: undefined, quotePrices: async () => prices } as unknown as MarketPorts['prices'],
      stats: {
        ranking: async () => (reads++, [row('a', 3n), row('b', 2n), row('c', 1n)]),
        indexedBlock: async () => 9,
      } as unknown as MarketPorts['stats'],
      memo: createMemo(60_000),
    }
    expect(await getLeaderboard(deps, { limit: 2, offset: 0 })).toMatchObject({ total: 3, nextOffset: 2, indexedBlock: 9, leaderboard: [{ rank: 1, agentId: 'a' }, { rank: 2, agentId: 'b' }] })
    expect(await getLeaderboard(deps, { limit: 2, offset: 2 })).toMatchObject({ nextOffset: null, leaderboard: [{ rank: 3, agentId: 'c', earnedUsd: '0.00' }] })
    expect(reads).toBe(1)
  })
})
