import { describe, expect, it } from 'vitest'
import { sharedPosition } from './getPortfolio.ts'

const weth = { address: '0xweth', symbol: 'WETH', decimals: 18, native: false, verified: true } as const
const eth = { ...weth, symbol: 'ETH', native: true }

describe('the ETH and WETH position', () => {
  it('is split between the two lines by balance, realised PnL on ETH, adding up to the whole', () => {
    const p = { amount: 10n, basisCents: 1001n, realisedCents: -7n }
    const held = [{ token: eth, balance: 3n }, { token: weth, balance: 1n }]
    const w = sharedPosition(p, weth, 1n, held)!
    const e = sharedPosition(p, eth, 3n, held)!
    expect(w).toEqual({ amount: 2n, basisCents: 250n, realisedCents: 0n })
    expect(e).toEqual({ amount: 8n, basisCents: 751n, realisedCents: -7n })
    // One line alone keeps the whole position.
    expect(sharedPosition(p, eth, 3n, [{ token: eth, balance: 3n }])).toBe(p)
  })
})
