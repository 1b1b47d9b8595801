/**
 * Pure price arithmetic on launched tokens' on-chain prices. Prices read from the chain and USD
 * values come from the price reader (`createPriceReader` in `chain/priceReader.ts`).
 */

/**
 * Token prices are kept as quote base units per whole token (1e18 token units), times 1e18:
 * the scale of the launchpad's `Trade.priceAfter` and `currentPrice`.
 */
export const PRICE_SCALE = 10n ** 18n
const WHOLE_TOKEN = 10n ** 18n

/** Price from effective reserves (real + virtual), in base units of each side. */
export function priceFromReserves(quoteReserve: bigint, tokenReserve: bigint): bigint {
  if (tokenReserve === 0n) return 0n
  return (quoteReserve * WHOLE_TOKEN * PRICE_SCALE) / tokenReserve
}

/** Market cap in quote base units: price times supply (both 18-decimal token units). */
export function marketCapInQuote(price: bigint, totalSupply: bigint): bigint {
  return (price * totalSupply) / (PRICE_SCALE * WHOLE_TOKEN)
}
