import { describe, expect, it } from 'vitest'
import type { Address } from 'viem'
import { checkWhitelisted, costBasis, holdingOf, totalValueUsd, transferAmount, transferCost, transferMatches, transferParamsOf, whitelistEntryView } from './walletRules.ts'
import type { WalletToken } from './ports.ts'

const now = Date.parse('2026-01-01T12:00:00Z')
const friend = '0x00000000000000000000000000000000000f00d1'
const usdc: WalletToken = { address: '0x00000000000000000000000000000000000000bb' as Address, symbol: 'USDC', decimals: 6, native: false, verified: true }
const eth: WalletToken = { address: '0x00000000000000000000000000000000000000aa' as Address, symbol: 'ETH', decimals: 18, native: true, verified: true }
const entry = (usableAt: string) => ({ address: friend, label: 'friend', usableAt, createdAt: '2026-01-01T00:00:00Z' })

describe('the whitelist check', () => {
  it('passes a listed address whose hold has passed, in any letter case', () => {
    expect(checkWhitelisted([entry('2026-01-01T11:59:59Z')], friend.toUpperCase().replace('0X', '0x'), now).label).toBe('friend')
    expect(checkWhitelisted([entry('2026-01-01T12:00:00Z')], friend, now).address).toBe(friend)
  })
  it('refuses an address not listed, and one still in its hold, each with its own code', () => {
    expect(() => checkWhitelisted([], friend, now)).toThrow(expect.objectContaining({ code: 'address_not_whitelisted', status: 403 }))
    expect(() => checkWhitelisted([entry('2026-01-01T12:00:01Z')], friend, now)).toThrow(
      expect.objectContaining({ code: 'address_in_cooldown', status: 403, message: expect.stringContaining('2026-01-01T12:00:01.000Z') }),
    )
  })
  it('shows an entry as usable only once its hold has passed', () => {
    expect(whitelistEntryView(entry('2026-01-01T12:00:01Z'), now)).toEqual({
      address: friend, label: 'friend', usableAt: '2026-01-01T12:00:01.000Z', usable: false, createdAt: '2026-01-01T00:00:00.000Z',
    })
    expect(whitelistEntryView(entry('2026-01-01T11:00:00Z'), now).usable).toBe(true)
  })
})

describe('transfer amounts', () => {
  it('converts to base units within the token decimals', () => {
    expect(transferAmount('12.5', usdc)).toBe(12_500_000n)
    expect(transferAmount('0.000001', usdc)).toBe(1n)
  })
  it('refuses more decimals than the token has, and zero, as field errors on amount', () => {
    expect(() => transferAmount('1.1234567', usdc)).toThrow(expect.objectContaining({ code: 'validation_failed', fieldErrors: { amount: 'At most 6 decimals for USDC.' } }))
    expect(() => transferAmount('0.000', usdc)).toThrow(expect.objectContaining({ fieldErrors: { amount: 'Must be greater than 0.' } }))
  })
  it('matches a retry only when agent, token, native flag, amount and recipient are the same', () => {
    const params = transferParamsOf(usdc, 10n, friend.toUpperCase().replace('0X', '0x'))
    expect(params.to).toBe(friend)
    const op = { agentId: 'a', params }
    expect(transferMatches(op, { agentId: 'a', params: transferParamsOf(usdc, 10n, friend) })).toBe(true)
    expect(transferMatches(op, { agentId: 'b', params })).toBe(false)
    expect(transferMatches(op, { agentId: 'a', params: transferParamsOf(usdc, 11n, friend) })).toBe(false)
    expect(transferMatches(op, { agentId: 'a', params: transferParamsOf({ ...usdc, native: true }, 10n, friend) })).toBe(false)
  })
  it('needs the fee at most, plus the amount when ETH itself is sent', () => {
    const gas = { gasLimit: 25_200n, maxFeePerGas: 3_000_000_000n }
    expect(transferCost({ ...gas, params: transferParamsOf(usdc, 10n, friend) })).toEqual({ maxFeeWei: 75_600_000_000_000n, ethNeeded: 75_600_000_000_000n })
    expect(transferCost({ ...gas, params: transferParamsOf(eth, 10n ** 18n, friend) }).ethNeeded).toBe(10n ** 18n + 75_600_000_000_000n)
  })
})

describe('USD valuation of holdings', () => {
  const tsla = '0x00000000000000000000000000000000000000cc'
  it('averages the cost of what was bought and reduces it in proportion to what was sold', () => {
    const basis = costBasis([
      { tokenIn: usdc.address, tokenOut: tsla, amountIn: '100000000', amountOut: '4', valueInUsd: '100.00' },
      { tokenIn: usdc.address, tokenOut: tsla, amountIn: '50000000', amountOut: '1', valueInUsd: '50.01' },
      { tokenIn: tsla, tokenOut: usdc.address, amountIn: '2', amountOut: '60000000', valueInUsd: '61.00' },
    ])
    // 5 bought for $150.01, 2 of 5 sold: 3/5 of the cost is left.
    expect(basis.get(tsla)).toBe(9000n)
    expect(basis.get(usdc.address)).toBe(6100n)
  })
  it('keeps no basis for a token sold out, and none without swaps', () => {
    const basis = costBasis([
      { tokenIn: usdc.address, tokenOut: tsla, amountIn: '1', amountOut: '4', valueInUsd: '10.00' },
      { tokenIn: tsla, tokenOut: eth.address, amountIn: '9', amountOut: '0', valueInUsd: '12.00' },
    ])
    expect(basis.get(tsla)).toBe(0n)
    expect(costBasis([]).size).toBe(0)
  })
  it('values a holding with its price, its PnL against the basis, and sums the priced ones', () => {
    const h = holdingOf(usdc, 4_977_500_000n, { unitUsd18: 10n ** 18n, amountUsd18: 4_977_500_000_000_000_000_000n }, 500_000n)
    expect(h).toEqual({
      symbol: 'USDC', address: usdc.address, decimals: 6, verified: true, balance: '4977.5', priceUsd: '1', valueUsd: '4977.50',
      costBasisUsd: '5000.00', unrealizedPnlUsd: '-22.50',
    })
    const unpriced = holdingOf(eth, 10n ** 17n, undefined, undefined)
    expect(unpriced).toMatchObject({ address: null, balance: '0.1', priceUsd: null, valueUsd: null, costBasisUsd: null, unrealizedPnlUsd: null })
    expect(totalValueUsd([h, unpriced, { ...h, valueUsd: '0.55' }])).toBe('4978.05')
  })
})
