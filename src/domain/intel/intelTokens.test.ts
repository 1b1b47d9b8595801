import { describe, expect, it } from 'vitest'
import type { Deployment } from '../tokens/ports.ts'
import { findReferenceAsset, isUsdc, referenceAssets } from './intelTokens.ts'

const a = (n: number) => `0x${String(n).repeat(40)}`
const deployment: Deployment = {
  chainId: 31337, weth: a(1), usdc: a(2), wethUsdcPair: a(3), quoteAssets: {}, venueQuotes: {},
  stocks: [{ symbol: 'TSLAx', name: 'Tesla xStock', address: `0x${'A'.repeat(40)}`, pair: `0x${'B'.repeat(40)}`, decimals: 18, logoUrl: 'https://x', seedPriceUsdc: '350000000' }],
}

describe('the tokens market intelligence covers beside launched ones', () => {
  it('WETH and each stock, in their USDC pools, addresses lower case', () => {
    expect(referenceAssets(deployment)).toEqual([
      { address: a(1), symbol: 'WETH', name: 'Wrapped Ether', pool: a(3), quoteSymbol: 'USDC', verified: true },
      { address: `0x${'a'.repeat(40)}`, symbol: 'TSLAx', name: 'Tesla xStock', pool: `0x${'b'.repeat(40)}`, quoteSymbol: 'USDC', verified: true },
    ])
    expect(referenceAssets(undefined)).toEqual([])
  })

  it('named as /price names them: ETH or WETH, a stock symbol in any case, an address in any case; nothing else', () => {
    for (const name of ['ETH', 'eth', 'WETH', 'weth', a(1)]) expect(findReferenceAsset(deployment, name)?.symbol).toBe('WETH')
    for (const name of ['TSLAx', 'tslax', 'TSLAX', `0x${'A'.repeat(40)}`]) expect(findReferenceAsset(deployment, name)?.symbol).toBe('TSLAx')
    for (const name of ['USDC', a(2), 'TSLA', a(4)]) expect(findReferenceAsset(deployment, name)).toBeUndefined()
    expect(isUsdc(deployment, 'usdc')).toBe(true)
    expect(isUsdc(deployment, a(2))).toBe(true)
    expect(isUsdc(undefined, 'USDC')).toBe(false)
  })
})
