import { describe, expect, it } from 'vitest'
import type { Address } from 'viem'
import {
  approvalNeeded, ethNeeded, gasLimitFrom, isSlippageRevert, maxFeePerGasOf, minAmountOut, operationMatches, policyTokens,
  policyValueUsd, preChainRefusal, quoteMatches, requireAcknowledged, sameTokenError, amountDecimalsError, swapWarnings,
} from './swapRules.ts'
import type { StoredQuote, SwapToken } from './ports.ts'

const weth = '0x00000000000000000000000000000000000000aa' as Address
const usdc = '0x00000000000000000000000000000000000000bb' as Address
const odd = '0x00000000000000000000000000000000000000cc' as Address
const ETH: SwapToken = { address: weth, symbol: 'ETH', decimals: 18, verified: true, native: true }
const WETH: SwapToken = { ...ETH, symbol: 'WETH', native: false }
const USDC: SwapToken = { address: usdc, symbol: 'USDC', decimals: 6, verified: true, native: false }
const ODD: SwapToken = { address: odd, symbol: 'ODD', decimals: 18, verified: false, native: false }
const ask = { agentId: 'a1', tokenIn: ETH, tokenOut: USDC, amountIn: 10n ** 18n, slippageBps: 50 }

describe('swap rules', () => {
  it('minAmountOut takes the slippage off the quoted output, rounding down', () => {
    expect(minAmountOut(10_000n, 50)).toBe(9_950n)
    expect(minAmountOut(999n, 1)).toBe(998n)
    expect(minAmountOut(1_000n, 5000)).toBe(500n)
  })

  it('unverified tokens need acknowledgeUnverified: true', () => {
    expect(() => requireAcknowledged([ETH, USDC], undefined)).not.toThrow()
    expect(() => requireAcknowledged([ETH, ODD], true)).not.toThrow()
    expect(() => requireAcknowledged([ETH, ODD], false)).toThrow(
      expect.objectContaining({ code: 'unverified_token', status: 422, message: `ODD (${odd}) is not verified; send acknowledgeUnverified: true to trade it anyway.` }),
    )
    expect(() => requireAcknowledged([ODD, { ...ODD, symbol: 'ODD2' }], undefined)).toThrow(/ODD .* and ODD2 .* are not verified/)
  })

  it('the policy sees both tokens of the swap, with their verification', () => {
    expect(policyTokens({ tokenIn: ETH, tokenOut: ODD })).toEqual([
      { symbol: 'ETH', address: weth, verified: true },
      { symbol: 'ODD', address: odd, verified: false },
    ])
  })

  it('refuses a swap of a token into itself and too many decimals', () => {
    expect(sameTokenError(ETH, WETH)).toBe('ETH and WETH are the same asset; wrapping is not a swap.')
    expect(sameTokenError(USDC, USDC)).toBe('Must differ from tokenIn.')
    expect(sameTokenError(ETH, USDC)).toBeUndefined()
    expect(amountDecimalsError('1.1234567', USDC)).toBe('At most 6 decimals for USDC.')
    expect(amountDecimalsError('1.123456', USDC)).toBeUndefined()
    expect(amountDecimalsError('12', USDC)).toBeUndefined()
  })

  it('a quote executes only for the same agent, tokens, amount and slippage', () => {
    const q: StoredQuote = {
      accountId: 'acc', agentId: 'a1', tokenIn: weth, nativeIn: true, tokenOut: usdc, nativeOut: false, amountIn: 10n ** 18n,
      slippageBps: 50, route: { kind: 'amm', path: [weth, usdc], hops: [] }, minAmountOut: 1n, expiresAt: 0,
    }
    expect(quoteMatches(q, ask)).toBe(true)
    expect(quoteMatches(q, { ...ask, tokenIn: WETH })).toBe(false)
    expect(quoteMatches(q, { ...ask, amountIn: 1n })).toBe(false)
    expect(quoteMatches(q, { ...ask, slippageBps: 51 })).toBe(false)
    expect(quoteMatches(q, { ...ask, agentId: 'a2' })).toBe(false)
  })

  it('a retried key matches only the same swap', () => {
    const params = { tokenIn: weth, tokenOut: usdc, tokenInInfo: ETH, tokenOutInfo: USDC, amountIn: (10n ** 18n).toString(), slippageBps: 50 }
    const op = { agentId: 'a1', params } as unknown as Parameters<typeof operationMatches>[0]
    expect(operationMatches(op, ask)).toBe(true)
    expect(operationMatches(op, { ...ask, tokenIn: WETH })).toBe(false)
    expect(operationMatches(op, { ...ask, amountIn: 2n })).toBe(false)
  })

  it('warns about unverified tokens, high impact and unpriced pairs', () => {
    expect(swapWarnings({ tokenIn: ETH, tokenOut: USDC, priceImpactBps: 500, inUsd: '1.00', outUsd: '1.00' })).toEqual([])
    const w = swapWarnings({ tokenIn: ETH, tokenOut: ODD, priceImpactBps: 501, inUsd: null, outUsd: null })
    expect(w.map((x) => x.code)).toEqual(['unverified_token', 'high_price_impact', 'unpriced'])
    expect(w[1]!.message).toBe('This trade moves the price by about 5.01%.')
  })

  it('values an unpriced input by its output, else $0', () => {
    expect(policyValueUsd('3.00', '2.00')).toBe('3.00')
    expect(policyValueUsd(null, '2.00')).toBe('2.00')
    expect(policyValueUsd(null, null)).toBe('0.00')
  })

  it('gas, fees, approvals and the ETH a swap needs', () => {
    expect(gasLimitFrom(100_000n)).toBe(180_000n)
    expect(maxFeePerGasOf(null)).toBe(3_000_000_000n)
    expect(maxFeePerGasOf(5n)).toBe(1_000_000_010n)
    expect(ethNeeded([10n, 20n], 2n, 7n)).toBe(67n)
    expect(approvalNeeded(null, 0n, 5n)).toBeNull()
    expect(approvalNeeded(usdc, 4n, 5n)).toBe(usdc)
    expect(approvalNeeded(usdc, 5n, 5n)).toBeNull()
  })

  it('a failure before signing is a refusal with its code; a slippage revert reads as slippage_exceeded', () => {
    expect(isSlippageRevert('AmmRouter: insufficient output amount')).toBe(true)
    expect(isSlippageRevert('Launchpad: tokens out below minimum')).toBe(true)
    expect(isSlippageRevert(undefined)).toBe(false)
    expect(preChainRefusal({ code: 'insufficient_funds', message: 'm' }, false)).toBeUndefined()
    expect(preChainRefusal({ code: 'tx_reverted', message: 'm' }, true)).toBeUndefined()
    expect(preChainRefusal({ code: 'insufficient_funds', message: 'm' }, true)).toMatchObject({ code: 'insufficient_funds', status: 422, message: 'm' })
    expect(preChainRefusal({ code: 'simulation_reverted', message: 'x: AmmRouter: insufficient output amount' }, true)).toMatchObject({ code: 'slippage_exceeded' })
    expect(preChainRefusal({ code: 'simulation_reverted', message: 'The transaction would revert: boom' }, true)).toMatchObject({
      code: 'simulation_reverted',
      message: 'The transaction would revert: boom',
    })
  })
})
