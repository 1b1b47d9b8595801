import { describe, expect, it } from 'vitest'
import { depositCredits, depositRef } from './depositCredits.ts'

const usd = (n: bigint) => n * 10n ** 18n

describe('depositCredits', () => {
  it('USDC at 1 USD: 1 credit per 0.001 USDC, rounded down', () => {
    expect(depositCredits({ amount: 10_000_000n, decimals: 6, unitUsd18: usd(1n) })).toEqual({ usd18: usd(10n), credits: 10_000 })
    expect(depositCredits({ amount: 1_999n, decimals: 6, unitUsd18: usd(1n) }).credits).toBe(1)
    expect(depositCredits({ amount: 999n, decimals: 6, unitUsd18: usd(1n) }).credits).toBe(0)
  })
  it('ETH at its pool price', () => {
    // 0.01 ETH at 3,000 USD = 30 USD = 30,000 credits.
    expect(depositCredits({ amount: 10n ** 16n, decimals: 18, unitUsd18: usd(3000n) })).toEqual({ usd18: usd(30n), credits: 30_000 })
    // 1 wei is worth nothing.
    expect(depositCredits({ amount: 1n, decimals: 18, unitUsd18: usd(3000n) }).credits).toBe(0)
  })
  it('refuses negative inputs; refs are per chain, tx and log', () => {
    expect(() => depositCredits({ amount: -1n, decimals: 6, unitUsd18: usd(1n) })).toThrow(RangeError)
    expect(depositRef({ chainId: 31337, txHash: '0xABC', logIndex: -1 })).toBe('31337:0xabc:-1')
  })
})
