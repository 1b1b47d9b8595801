import { formatUnits } from 'viem'

/**
 * Pure price and USD arithmetic, shared by the domain and the chain adapters: token prices as
 * quote base units per whole token times PRICE_SCALE, USD values as bigints scaled by 1e18
 * ("usd18") until they are shown. Nothing here reads the chain or uses floating point.
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

/** One dollar in usd18. `formatUsd` renders cents (truncated), `formatPrice` up to 18 decimals. */
export const USD_SCALE = 10n ** 18n
export const pow10 = (n: number) => 10n ** BigInt(n)

/** usd18 as dollars and cents ("15.00"), truncated. */
export function formatUsd(usd18: bigint): string {
  const cents = usd18 / 10n ** 16n
  const s = cents.toString().padStart(3, '0')
  return `${s.slice(0, -2)}.${s.slice(-2)}`
}

/** usd18 as a price with up to 18 decimals and no trailing zeros ("3000", "0.0000045"). */
export function formatPrice(usd18: bigint): string {
  return trimDecimal(formatUnits(usd18, 18))
}

/** A base-unit amount as a decimal string of whole units without trailing zeros ("0.005"). */
export function formatAmount(amount: bigint, decimals: number): string {
  return trimDecimal(formatUnits(amount, decimals))
}

function trimDecimal(s: string): string {
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s
}

/** USD value (usd18) of `amount` base units of an asset with `decimals`, one whole unit costing `unitUsd18`. */
export function usdOf(amount: bigint, decimals: number, unitUsd18: bigint): bigint {
  return (amount * unitUsd18) / pow10(decimals)
}

/**
 * USD value (usd18) of `amount` base units of an 18-decimal launched token priced at `price`
 * (quote base units per whole token, times PRICE_SCALE), its quote asset costing `quoteUsd18`.
 */
export function tokenAmountUsd(amount: bigint, price: bigint, quoteDecimals: number, quoteUsd18: bigint): bigint {
  return (amount * price * quoteUsd18) / (PRICE_SCALE * 10n ** 18n * pow10(quoteDecimals))
}

/** USD price (usd18) of one whole launched token from its price (PRICE_SCALE) and its quote asset's. */
export function tokenUnitUsd(price: bigint, quoteDecimals: number, quoteUsd18: bigint): bigint {
  return (price * quoteUsd18) / (PRICE_SCALE * pow10(quoteDecimals))
}

/**
 * USD per whole unit (usd18) of a quote asset pegged to the dollar (USDC), with no chain read;
 * null for any other symbol.
 *
 * @example
 * pegUsd18('USDC') // 10n ** 18n
 */
export function pegUsd18(symbol: string): bigint | null {
  return symbol === 'USDC' ? USD_SCALE : null
}
