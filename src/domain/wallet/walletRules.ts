import { formatUnits, parseUnits } from 'viem'
import { ValidationError } from '../errors.ts'
import { usdCents } from '../agents/policy.ts'
import type { WhitelistEntry } from '../agents/ports.ts'
import { amountDecimalsError } from '../swaps/swapRules.ts'
import { formatPrice, formatUsd } from '../tokens/priceMath.ts'
import { AddressInCooldownError, AddressNotWhitelistedError } from './errors.ts'
import type { SwapFill, TransferParams, UsdValue, WalletToken } from './ports.ts'

const iso = (d: Date | string) => new Date(d).toISOString()

/** Whether a whitelist entry's hold has passed at `nowMs`. */
export const isUsable = (entry: Pick<WhitelistEntry, 'usableAt'>, nowMs: number) => new Date(entry.usableAt).getTime() <= nowMs

/**
 * The whitelist entry a transfer to `to` goes through: refused when the address is not listed
 * (403 `address_not_whitelisted`) or its hold has not passed (403 `address_in_cooldown`).
 *
 * @example
 * const entry = checkWhitelisted(await agents.whitelist(agentId), '0xabc…', Date.now())
 */
export function checkWhitelisted(entries: readonly WhitelistEntry[], to: string, nowMs: number): WhitelistEntry {
  const address = to.toLowerCase()
  const entry = entries.find((e) => e.address.toLowerCase() === address)
  if (!entry) throw new AddressNotWhitelistedError({ address })
  if (!isUsable(entry, nowMs)) throw new AddressInCooldownError({ address, usableAt: iso(entry.usableAt) })
  return entry
}

/** A whitelist entry as the API shows it (camelCase; `usable` once its hold has passed). */
export function whitelistEntryView(entry: WhitelistEntry, nowMs: number) {
  return { address: entry.address, label: entry.label, usableAt: iso(entry.usableAt), usable: isUsable(entry, nowMs), createdAt: iso(entry.createdAt) }
}

/** The amount in the token's base units; a field error when it has more decimals than the token. */
export function transferAmount(amount: string, token: Pick<WalletToken, 'decimals' | 'symbol'>): bigint {
  const tooPrecise = amountDecimalsError(amount, token)
  if (tooPrecise) throw new ValidationError({ amount: tooPrecise })
  const value = parseUnits(amount, token.decimals)
  if (value <= 0n) throw new ValidationError({ amount: 'Must be greater than 0.' })
  return value
}

/** What a transfer operation stores: the token, whether it is native ETH, the base-unit amount, the recipient. */
export const transferParamsOf = (token: WalletToken, amount: bigint, to: string): TransferParams => ({
  token: token.address,
  native: token.native,
  amount: amount.toString(),
  to: to.toLowerCase() as TransferParams['to'],
})

/** Whether an existing operation is this same transfer (a retry with the same key must ask for the same one). */
export function transferMatches(op: { agentId: string; params: TransferParams }, ask: { agentId: string; params: TransferParams }): boolean {
  const [a, b] = [op.params, ask.params]
  return op.agentId === ask.agentId && a.token === b.token && a.native === b.native && a.to === b.to && a.amount === b.amount
}

/** USD with 18 decimals as dollars and cents ("12.50"); '0.00' when the token has no market (the caps see $0). */
export const usdOrZero = (value: UsdValue | undefined) => (value ? formatUsd(value.amountUsd18) : '0.00')

/** Cents as a signed dollar string ("-3.07"). */
export function centsToUsd(cents: bigint): string {
  const neg = cents < 0n
  const s = (neg ? -cents : cents).toString().padStart(3, '0')
  return `${neg ? '-' : ''}${s.slice(0, -2)}.${s.slice(-2)}`
}

/**
 * Cost basis in cents per token address from the agent's confirmed swaps, oldest first (average
 * cost: USD paid for what was bought, reduced in proportion by what was sold). An agent with no
 * swaps has no basis.
 *
 * @example
 * costBasis([{ tokenIn: usdc, tokenOut: tsla, amountIn: '100000000', amountOut: '5', valueInUsd: '100.00' }]) // Map { tsla => 10000n }
 */
export function costBasis(swaps: readonly SwapFill[]): Map<string, bigint> {
  const held = new Map<string, { amount: bigint; cents: bigint }>()
  for (const s of swaps) {
    const paidCents = s.valueInUsd ? usdCents(s.valueInUsd) : 0n
    const outAmount = s.amountOut ? BigInt(s.amountOut) : 0n
    if (s.tokenOut && outAmount > 0n) {
      const h = held.get(s.tokenOut) ?? { amount: 0n, cents: 0n }
      held.set(s.tokenOut, { amount: h.amount + outAmount, cents: h.cents + paidCents })
    }
    if (s.tokenIn && s.amountIn) {
      const h = held.get(s.tokenIn)
      if (h && h.amount > 0n) {
        const sold = BigInt(s.amountIn)
        const keep = sold >= h.amount ? 0n : h.amount - sold
        held.set(s.tokenIn, { amount: keep, cents: (h.cents * keep) / h.amount })
      }
    }
  }
  return new Map([...held].map(([k, v]) => [k, v.cents]))
}

/** One line of the portfolio: the balance, its USD value and, with a cost basis, the unrealised PnL. */
export function holdingOf(token: WalletToken, balance: bigint, priced: UsdValue | undefined, basisCents: bigint | undefined) {
  const value = priced ? formatUsd(priced.amountUsd18) : null
  return {
    symbol: token.symbol,
    address: token.native ? null : token.address,
    decimals: token.decimals,
    verified: token.verified,
    balance: formatUnits(balance, token.decimals),
    priceUsd: priced ? formatPrice(priced.unitUsd18) : null,
    valueUsd: value,
    costBasisUsd: basisCents === undefined ? null : centsToUsd(basisCents),
    unrealizedPnlUsd: basisCents !== undefined && value !== null ? centsToUsd(usdCents(value) - basisCents) : null,
  }
}
export type Holding = ReturnType<typeof holdingOf>

/** The portfolio's total: the sum of the priced holdings. */
export const totalValueUsd = (holdings: readonly Holding[]) => centsToUsd(holdings.reduce((s, h) => s + (h.valueUsd ? usdCents(h.valueUsd) : 0n), 0n))

/**
 * A transfer's fee at most (gas limit times the fee cap) and the ETH it needs in all (the fee,
 * plus the amount when ETH itself is sent).
 */
export function transferCost(p: { gasLimit: bigint; maxFeePerGas: bigint; params: TransferParams }) {
  const maxFeeWei = p.gasLimit * p.maxFeePerGas
  return { maxFeeWei, ethNeeded: maxFeeWei + (p.params.native ? BigInt(p.params.amount) : 0n) }
}
