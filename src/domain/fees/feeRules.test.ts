import { describe, expect, it } from 'vitest'
import { claimableTokens, claimFailed, claimMatches, claimResource, planClaims, sumFeeTotals } from './feeRules.ts'
import type { CreatorToken } from './ports.ts'
import type { QuotePrices } from '../tokens/ports.ts'

const E18 = 10n ** 18n
const creator = '0x00000000000000000000000000000000000000C0'
const payout = '0x00000000000000000000000000000000000000P0'.replace('P', 'a')
const token = (venue: string, address: string, by = creator): CreatorToken => ({
  address, symbol: address.slice(-4), name: 'T', venue, quoteSymbol: 'ETH', poolAddress: null, creatorAddress: by,
})
const a = token('venue-a', '0x00000000000000000000000000000000000000a1')
const b = token('venue-b', '0x00000000000000000000000000000000000000b1')
const self = token('self-funded', '0x00000000000000000000000000000000000000c1')
const decimals = (s: string) => (s === 'ETH' ? 18 : undefined)

describe('which tokens a claim covers and what it sends', () => {
  it('only tokens with a fee stream that the agent wallet created (any case)', () => {
    const stranger = token('venue-a', '0x00000000000000000000000000000000000000d1', '0x00000000000000000000000000000000000000dd')
    expect(claimableTokens([a, b, self, stranger], creator.toLowerCase())).toEqual([a, b])
  })

  it('one claim per token with unclaimed fees, quote and token sides, to the payout wallet', () => {
    const claims = planClaims({
      tokens: [a, b],
      positions: [
        { earned: 5n * 10n ** 15n, claimed: 2n * 10n ** 15n, earnedToken: 0n, claimedToken: 0n },
        { earned: E18, claimed: E18, earnedToken: 3n * E18, claimedToken: E18 },
      ],
      to: payout.toUpperCase().replace('0X', '0x'),
      quoteDecimals: decimals,
      named: undefined,
    })
    expect(claims).toEqual([
      { tokenAddress: a.address, symbol: a.symbol, venue: 'venue-a', quote: 'ETH', quoteDecimals: 18, to: payout, expectedAmount: '0.003', expectedTokenAmount: '0' },
      { tokenAddress: b.address, symbol: b.symbol, venue: 'venue-b', quote: 'ETH', quoteDecimals: 18, to: payout, expectedAmount: '0', expectedTokenAmount: '2' },
    ])
  })

  it('nothing left anywhere is 422 nothing_to_claim, worded for one token or all', () => {
    const none = { earned: E18, claimed: E18, earnedToken: 0n, claimedToken: 0n }
    const plan = (named: string | undefined) => () => planClaims({ tokens: [a], positions: [none], to: payout, quoteDecimals: decimals, named })
    expect(plan(undefined)).toThrowError(expect.objectContaining({ code: 'nothing_to_claim', status: 422, message: "None of this agent's tokens has unclaimed creator fees." }))
    expect(plan(a.address)).toThrowError(expect.objectContaining({ code: 'nothing_to_claim', message: 'This token has no unclaimed creator fees.' }))
  })
})

describe('a claim found by its operation id', () => {
  const op = { agentId: 'ag-1', params: { claims: [{ tokenAddress: a.address, symbol: 'x', venue: 'venue-a', quote: 'ETH', quoteDecimals: 18, to: payout, expectedAmount: '1', expectedTokenAmount: '0' }] } }
  it('answers the same agent, and a named token only when it was the one claimed', () => {
    expect(claimMatches(op, { agentId: 'ag-1' })).toBe(true)
    expect(claimMatches(op, { agentId: 'ag-1', tokenAddress: a.address.toUpperCase().replace('0X', '0x') })).toBe(true)
    expect(claimMatches(op, { agentId: 'ag-1', tokenAddress: b.address })).toBe(false)
    expect(claimMatches(op, { agentId: 'ag-2' })).toBe(false)
  })

  it('shows the planned amounts (no tx hash) while pending, what was paid once confirmed', () => {
    const pending = claimResource({ id: 'op', agentId: 'ag-1', status: 'submitted', txHash: null, error: null }, op.params)
    expect(pending).toEqual({
      id: 'op', agentId: 'ag-1', status: 'submitted', txHash: null, to: payout, gasUsed: null, blockNumber: null,
      claims: [{ tokenAddress: a.address, symbol: 'x', venue: 'venue-a', quote: 'ETH', amount: '1', tokenAmount: '0', to: payout, txHash: null }],
    })
    const paid = [{ tokenAddress: a.address, amount: '0.9', txHash: '0x1' }]
    expect(claimResource({ id: 'op', agentId: 'ag-1', status: 'confirmed', txHash: '0x1', error: null, claims: paid, gasUsed: '1', blockNumber: '7' }, op.params))
      .toMatchObject({ status: 'confirmed', claims: paid, gasUsed: '1', blockNumber: '7' })
  })

  it('a failed claim is the error the caller sees; a revert for nothing to claim is nothing_to_claim', () => {
    expect(claimFailed({ code: 'transaction_reverted', message: 'Nothing to claim' })).toMatchObject({ code: 'nothing_to_claim', status: 422 })
    expect(claimFailed({ code: 'submit_failed', message: 'node down' })).toMatchObject({ code: 'submit_failed', status: 502 })
    expect(claimFailed(null)).toMatchObject({ code: 'claim_failed', status: 422 })
  })
})

describe('platform fee totals', () => {
  const prices: QuotePrices = { block: 1n, usd18: new Map([['ETH', 3000n * E18]]), decimals: new Map([['ETH', 18], ['DAI', 18]]) }
  const row = { quoteSymbol: 'ETH', feeAsset: 'quote' as const, price: null, trades: 2, creator: 5n * 10n ** 15n, platform: 5n * 10n ** 15n, trades24h: 1, creator24h: 10n ** 15n, platform24h: 10n ** 15n }
  it('sums venues in USD, every venue listed, unpriced groups left out and counted', () => {
    const t = sumFeeTotals(prices, [
      { ...row, venue: 'venue-a' },
      // Token-side fees at the token's price: 1e18 tokens at 0.001 ETH each = $3.
      { ...row, venue: 'venue-b', feeAsset: 'token', price: 10n ** 15n * E18, creator: E18, platform: 0n, creator24h: 0n, platform24h: 0n },
      { ...row, venue: 'venue-a', quoteSymbol: 'DAI' },
    ])
    expect(t.venues.map((v) => [v.venue, v.trades, v.creatorFeesUsd, v.platformFeesUsd])).toEqual([
      ['venue-a', 4, '15.00', '15.00'], ['venue-b', 2, '3.00', '0.00'], ['self-funded', 0, '0.00', '0.00'],
    ])
    expect(t.totals).toMatchObject({ trades: 6, totalFeesUsd: '33.00', last24h: { trades: 3, totalFeesUsd: '6.00' } })
    expect(t.unpricedGroups).toBe(1)
  })
})
