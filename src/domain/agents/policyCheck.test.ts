import { describe, expect, it } from 'vitest'
import { checkPolicy, PolicyViolationError } from './policyCheck.ts'

const move = { tokens: [{ symbol: 'ETH', address: '0xaaa' }, { symbol: 'CAT', address: '0xbbb' }], usdValue: '100', spentTodayUsd: '0' }
const rule = (f: () => void) => {
  try {
    f()
  } catch (e) {
    expect(e).toBeInstanceOf(PolicyViolationError)
    expect((e as PolicyViolationError).code).toBe('policy_violation')
    expect((e as PolicyViolationError).status).toBe(403)
    return (e as PolicyViolationError).rule
  }
  return 'allowed'
}

describe('agent policy', () => {
  it('the defaults let a normal trade through', () => {
    expect(rule(() => checkPolicy({}, move))).toBe('allowed')
    expect(rule(() => checkPolicy(undefined, { ...move, usdValue: '1000', priceImpactBps: 1500 }))).toBe('allowed')
  })
  it('paused refuses everything', () => {
    expect(rule(() => checkPolicy({ paused: true }, move))).toBe('paused')
  })
  it('deny list matches symbols and addresses, case-insensitively', () => {
    expect(rule(() => checkPolicy({ deny_tokens: ['cat'] }, move))).toBe('deny_tokens')
    expect(rule(() => checkPolicy({ deny_tokens: ['0xBBB'] }, move))).toBe('deny_tokens')
    expect(rule(() => checkPolicy({ deny_tokens: ['DOG'] }, move))).toBe('allowed')
  })
  it('a non-empty allow list must contain every token touched', () => {
    expect(rule(() => checkPolicy({ allow_tokens: ['ETH'] }, move))).toBe('allow_tokens')
    expect(rule(() => checkPolicy({ allow_tokens: ['ETH', '0xbbb'] }, move))).toBe('allowed')
  })
  it('per-transaction cap, to the cent', () => {
    expect(rule(() => checkPolicy({ max_trade_usd: '100' }, move))).toBe('allowed')
    expect(rule(() => checkPolicy({ max_trade_usd: '99.99' }, move))).toBe('max_trade_usd')
  })
  it('24-hour cap counts what was already spent', () => {
    expect(rule(() => checkPolicy({ max_daily_usd: '500' }, { ...move, spentTodayUsd: '400' }))).toBe('allowed')
    expect(rule(() => checkPolicy({ max_daily_usd: '500' }, { ...move, spentTodayUsd: '400.01' }))).toBe('max_daily_usd')
  })
  it('price impact cap applies only where there is an impact', () => {
    expect(rule(() => checkPolicy({ max_price_impact_bps: 100 }, { ...move, priceImpactBps: 101 }))).toBe('max_price_impact_bps')
    expect(rule(() => checkPolicy({ max_price_impact_bps: 100 }, { ...move, priceImpactBps: 100 }))).toBe('allowed')
    expect(rule(() => checkPolicy({ max_price_impact_bps: 0 }, move))).toBe('allowed')
  })
})
