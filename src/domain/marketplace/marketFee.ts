/** The platform's fee on a sale, in basis points of the price: 5 %, documented in docs/api.md. */
export const MARKET_FEE_BPS = 500

/**
 * The platform fee on a sale of `priceCredits`, rounded down (a sale of 19 credits or less pays none).
 *
 * @example
 * marketFee(1000) // 50
 */
export function marketFee(priceCredits: number): number {
  return Math.floor((priceCredits * MARKET_FEE_BPS) / 10_000)
}
