import { describe, expect, it } from 'vitest'
import { checkPolicy, checkTokenLists, PolicyViolationError } from './policyCheck.ts'

const WETH = '0x' + 'a'.repeat(40)
const CAT = '0x' + 'b'.repeat(40)
const FAKE_USDC = '0x' + 'c'.repeat(40)
const USDC = '0x' + 'd'.repeat(40)
const move = { tokens: [{ symbol: 'ETH', address: WETH, verified: true }, { symbol: 'CAT', address: CAT, verified: false }], usdValue: '100', spentTodayUsd: '0' }
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
  it('deny list matches addresses, case-insensitively', () => {
    expect(rule(() => checkPolicy({ deny_tokens: [CAT.toUpperCase().replace('0X', '0x')] }, move))).toBe('deny_tokens')
    expect(rule(() => checkPolicy({ deny_tokens: [USDC] }, move))).toBe('allowed')
  })
  it('a non-empty allow list must contain every token touched', () => {
    expect(rule(() => checkPolicy({ allow_tokens: [WETH] }, move))).toBe('allow_tokens')
    expect(rule(() => checkPolicy({ allow_tokens: [WETH, CAT] }, move))).toBe('allowed')
  })
  it('ETH and WETH are one asset: both carry WETH\'s address', () => {
    const weth = [{ symbol: 'WETH', address: WETH, verified: true }]
    expect(rule(() => checkTokenLists({ deny_tokens: [WETH] }, weth))).toBe('deny_tokens')
    expect(rule(() => checkTokenLists({ deny_tokens: [WETH] }, [{ symbol: 'ETH', address: WETH, verified: true }]))).toBe('deny_tokens')
  })
  it('a look-alike never passes an allow list of addresses, nor one of symbols stored before lists held addresses', () => {
    const lookAlike = [{ symbol: 'USDC', address: FAKE_USDC, verified: false }]
    expect(rule(() => checkTokenLists({ allow_tokens: [WETH, USDC] }, lookAlike))).toBe('allow_tokens')
    expect(rule(() => checkTokenLists({ allow_tokens: ['ETH', 'USDC'] }, lookAlike))).toBe('allow_tokens')
    expect(rule(() => checkTokenLists({ allow_tokens: ['ETH', 'USDC'] }, [{ symbol: 'USDC', address: USDC, verified: true }]))).toBe('allowed')
    // A stored symbol entry denies every token of that symbol (failing safe), ETH and WETH alike.
    expect(rule(() => checkTokenLists({ deny_tokens: ['usdc'] }, lookAlike))).toBe('deny_tokens')
    expect(rule(() => checkTokenLists({ deny_tokens: ['WETH'] }, [{ symbol: 'ETH', address: WETH, verified: true }]))).toBe('deny_tokens')
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
