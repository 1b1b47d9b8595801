import { describe, expect, it } from 'vitest'
import type { LaunchInput } from './launch.schema.ts'
import { checkLaunchPolicy, launchFieldErrors, launchMatches, launchProgress, launchUsdValue, startingFigures } from './launchRules.ts'

const AGENT = '00000000-0000-4000-8000-0000000000a1'
const facts = { allowedQuotes: ['ETH', 'USDC'], symbolVerified: false, agent: { status: 'stopped', policy: {} } }

describe('launchFieldErrors', () => {
  it('accepts a well-formed launch of a live agent', () => {
    expect({ ...launchFieldErrors('venue-a', { agentId: AGENT, symbol: 'MOON', quote: 'ETH' }, facts) }).toEqual({})
  })

  it('names a quote the venue does not take, a seed off self-funded, a verified symbol, a missing or deleted agent', () => {
    const errors = launchFieldErrors('venue-b', { symbol: 'USDC', quote: 'TSLAx', seedAmount: '1' }, { ...facts, symbolVerified: true, agent: undefined })
    expect({ ...errors }).toEqual({
      quote: 'Not a quote asset of venue-b; one of ETH, USDC (GET /api/v1/quotes?venue=venue-b).',
      seedAmount: 'Only self-funded launches take a seed amount.',
      symbol: 'USDC is the symbol of a verified asset; a launch cannot take it.',
      agentId: 'No such agent in this account.',
    })
    expect({ ...launchFieldErrors('self-funded', { seedAmount: '1' }, { ...facts, agent: { status: 'deleted', policy: {} } }) }).toEqual({ agentId: 'The agent is deleted.' })
    expect({ ...launchFieldErrors('venue-a', {}, { ...facts, agent: 'unchecked' }) }).toEqual({})
  })
})

describe('checkLaunchPolicy', () => {
  const usdc = { symbol: 'USDC', address: '0x00000000000000000000000000000000000000aa', verified: true }

  it('moves $0 on the venues and the seed on a self-funded launch', () => {
    expect(launchUsdValue('venue-a', '250.00')).toBe('0.00')
    expect(launchUsdValue('self-funded', '250.00')).toBe('250.00')
    expect(launchUsdValue('self-funded', undefined)).toBe('0.00')
  })

  it('refuses by the kill switch, the quote on a deny list, and seeds over the per-trade or daily cap', () => {
    const move = { quote: usdc, usdValue: '250.00', spentTodayUsd: '0' }
    expect(() => checkLaunchPolicy({ paused: true }, { ...move, usdValue: '0.00' })).toThrow(expect.objectContaining({ code: 'policy_violation', rule: 'paused' }))
    expect(() => checkLaunchPolicy({ deny_tokens: [usdc.address] }, move)).toThrow(expect.objectContaining({ rule: 'deny_tokens' }))
    expect(() => checkLaunchPolicy({ max_trade_usd: '100' }, move)).toThrow(expect.objectContaining({ rule: 'max_trade_usd' }))
    expect(() => checkLaunchPolicy({ max_trade_usd: '1000', max_daily_usd: '300' }, { ...move, spentTodayUsd: '100' })).toThrow(expect.objectContaining({ rule: 'max_daily_usd' }))
    expect(() => checkLaunchPolicy({ max_trade_usd: '1000', max_daily_usd: '300' }, { ...move, spentTodayUsd: '50' })).not.toThrow()
  })
})

describe('launchMatches', () => {
  const made: LaunchInput = {
    launchId: 'l', accountId: 'a', agentId: AGENT, venue: 'venue-a', symbol: 'MOON', name: 'Moon', description: null, logoUrl: null, quote: 'ETH', seedAmount: null,
  }
  const fields = { agentId: AGENT, symbol: 'MOON', name: 'Moon', quote: 'ETH' }

  it('is the same launch only for the same venue, agent and token', () => {
    expect(launchMatches(made, { venue: 'venue-a', fields })).toBe(true)
    expect(launchMatches(made, { venue: 'venue-b', fields })).toBe(false)
    expect(launchMatches(made, { venue: 'venue-a', fields: { ...fields, symbol: 'SUN' } })).toBe(false)
    expect(launchMatches(made, { venue: 'venue-a', fields: { ...fields, description: 'new' } })).toBe(false)
  })
})

describe('launch figures', () => {
  it('keeps the progress of the step a failed launch reached', () => {
    expect(launchProgress('confirming', { txHash: '0x1', gas: '1' })).toEqual({ step: 'confirming', percent: 70 })
    expect(launchProgress('failed', { txHash: null, gas: '1' })).toEqual({ step: 'failed', percent: 40 })
    expect(launchProgress('failed', { txHash: null, gas: null })).toEqual({ step: 'failed', percent: 15 })
  })

  it('prices one token as market cap over supply, in full below a cent', () => {
    // 5 ETH over a billion tokens with ETH at $3000: the venue-b start.
    const figures = startingFigures({ marketCap: 5n * 10n ** 18n, quoteDecimals: 18, totalSupply: 10n ** 27n, quoteUsd18: 3000n * 10n ** 18n })
    expect(figures).toEqual({ price: { quote: '0.000000005', usd: '0.000015' }, marketCapUsd: '15000.00' })
    const usdc = startingFigures({ marketCap: 15_000n * 10n ** 6n, quoteDecimals: 6, totalSupply: 10n ** 27n, quoteUsd18: 10n ** 18n })
    expect(usdc).toEqual({ price: { quote: '0.000015', usd: '0.000015' }, marketCapUsd: '15000.00' })
  })
})
