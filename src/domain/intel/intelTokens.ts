import type { Deployment } from '../tokens/ports.ts'

/**
 * The tokens market intelligence covers: every token with a pool the index follows. That is a
 * launched token (its curve or pool, in its own quote asset), or one of the deployment's
 * reference assets, each in its USDC pool: WETH (so ETH's price in USD, as /price reads it) and
 * the stocks. USDC itself is every reference pool's quote asset (pegged at $1) and has none.
 */
export type IntelToken = { address: string; symbol: string; name: string; quoteSymbol: string; verified: boolean }

/** A reference asset with its USDC pool (addresses lower case). */
export type ReferenceAsset = IntelToken & { pool: string }

/**
 * WETH and the stocks, with their USDC pools; none without a chain.
 *
 * @example
 * referenceAssets(deployment).map((a) => a.symbol) // ['WETH', 'TSLAx', 'NVDAx', 'AAPLx']
 */
export function referenceAssets(d: Deployment | undefined): ReferenceAsset[] {
  if (!d) return []
  const usdc = (a: { address: string; symbol: string; name: string; pool: string }): ReferenceAsset => ({ ...a, quoteSymbol: 'USDC', verified: true })
  return [
    usdc({ address: d.weth, symbol: 'WETH', name: 'Wrapped Ether', pool: d.wethUsdcPair }),
    ...d.stocks.map((s) => usdc({ address: s.address.toLowerCase(), symbol: s.symbol, name: s.name, pool: s.pair.toLowerCase() })),
  ]
}

/**
 * A reference asset named as the other endpoints name it: its address, `ETH` or `WETH`, or a
 * stock's symbol, in any case; undefined for anything else.
 *
 * @example
 * findReferenceAsset(deployment, 'tslax') // { address: '0x…', symbol: 'TSLAx', quoteSymbol: 'USDC', … }
 */
export function findReferenceAsset(d: Deployment | undefined, mint: string): ReferenceAsset | undefined {
  const name = mint.trim().toLowerCase()
  const wanted = name === 'eth' ? 'weth' : name
  return referenceAssets(d).find((a) => a.address === wanted || a.symbol.toLowerCase() === wanted)
}

/** Whether `mint` names USDC (by symbol or address). */
export const isUsdc = (d: Deployment | undefined, mint: string) => d !== undefined && [d.usdc, 'usdc'].includes(mint.trim().toLowerCase())
