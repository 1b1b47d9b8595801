import { usdCents } from '../agents/policy.ts'
import { centsToUsd } from './walletRules.ts'
import type { LedgerOp } from './ledgerOps.ts'

/**
 * Cost basis and profit and loss per token, by average cost, in cents, from an agent's
 * confirmed operations oldest first:
 * - a swap disposes of `amountIn` of tokenIn for its USD value and acquires `amountOut` of
 *   tokenOut at that same value (the value the swap recorded when it executed: the tokens in at
 *   the prices of that block), so trade fees and price impact are in the basis;
 * - a transfer out disposes of the amount for its USD value (what leaves is realised at market);
 * - a transfer in (an ERC-20 Transfer or plain ETH the wallet did not send itself, indexed) is
 *   acquired at its USD value at its own block; unpriced there, at $0;
 * - a creator-fee claim is income: the USD value of what it paid (at its block) is realised on
 *   the book's `fees` entry (FEES_KEY); what it paid into the agent's own wallet is acquired at
 *   that same value (a later sale realises only the change since), what went to a payout wallet
 *   is not held;
 * - a launch acquires its creator allocation (what its transactions delivered to the wallet; none
 *   on the reference venues) at zero cost; a self-funded launch's seed, locked into its pool, is
 *   disposed of for $0, so the basis it carried is realised as the launch's cost;
 * - the gas each one paid (USD at its block's ETH price) is a realised loss of the book's `gas`
 *   entry (GAS_KEY), so realised totals are net of gas and a holding's own figures are not.
 * Disposing takes `cost x sold / held` off the basis; the proceeds minus that share are realised.
 * A disposal of more than the known holding (tokens that arrived by deposit or faucet, whose
 * cost the service did not record) is taken at its own proceeds: no gain or loss on that part.
 * Unrealised PnL is the value now minus the remaining basis (walletRules.holdingOf).
 */

/** The book's entry for gas: no amount, no basis, its realised PnL the gas paid (negative). */
export const GAS_KEY = 'gas'
/** The book's entry for creator fees claimed: no amount, no basis, its realised PnL the fees' value (income). */
export const FEES_KEY = 'fees'

export type Position = { amount: bigint; basisCents: bigint; realisedCents: bigint }

/**
 * @example
 * // 1,000 TOK for $100, 250 for $50, then 500 sold for $80: basis $150 x 750/1250 = $90, realised $20
 * pnlLedger([buy(1000n, '100.00'), buy(250n, '50.00'), sell(500n, '80.00')]).get(tok)
 * // { amount: 750n, basisCents: 9000n, realisedCents: 2000n }
 */
export function pnlLedger(ops: readonly LedgerOp[]): Map<string, Position> {
  const book = new Map<string, Position>()
  for (const op of ops) applyOp(book, op)
  return book
}

/** Applies one operation to a book of positions (pnlLedger, performanceSeries). */
function applyOp(book: Map<string, Position>, s: LedgerOp): void {
  const pos = (token: string) => {
    const p = book.get(token) ?? { amount: 0n, basisCents: 0n, realisedCents: 0n }
    book.set(token, p)
    return p
  }
  if (s.gasUsd) pos(GAS_KEY).realisedCents -= usdCents(s.gasUsd)
  const dispose = (token: string, amount: bigint, proceedsCents: bigint) => {
    if (amount <= 0n) return
    const p = pos(token)
    const known = amount < p.amount ? amount : p.amount
    if (known === 0n) return
    const share = (p.basisCents * known) / p.amount
    p.realisedCents += (proceedsCents * known) / amount - share
    p.basisCents -= share
    p.amount -= known
  }
  if (s.kind === 'transfer') {
    dispose(s.token, BigInt(s.amount), usdCents(s.valueUsd))
    return
  }
  if (s.kind === 'receive') {
    const p = pos(s.token)
    p.amount += BigInt(s.amount)
    p.basisCents += s.valueUsd === null ? 0n : usdCents(s.valueUsd)
    return
  }
  if (s.kind === 'launch') {
    // The seed is locked in the pool for good: disposed of for nothing, its basis realised as the launch's cost.
    if (s.seed) dispose(s.seed.token, BigInt(s.seed.amount), 0n)
    if (BigInt(s.allocation) > 0n) pos(s.token).amount += BigInt(s.allocation)
    return
  }
  if (s.kind === 'claim') {
    for (const c of s.claimed) {
      const cents = c.valueUsd === null ? 0n : usdCents(c.valueUsd)
      pos(FEES_KEY).realisedCents += cents
      if (!c.held) continue
      const p = pos(c.token)
      p.amount += BigInt(c.amount)
      p.basisCents += cents
    }
    return
  }
  const cents = s.valueInUsd ? usdCents(s.valueInUsd) : 0n
  if (s.tokenIn && s.amountIn) dispose(s.tokenIn, BigInt(s.amountIn), cents)
  const out = s.amountOut ? BigInt(s.amountOut) : 0n
  if (s.tokenOut && out > 0n) {
    const p = pos(s.tokenOut)
    p.amount += out
    p.basisCents += cents
  }
}

/** The ledger's running totals at each point (cents): basis held, realised PnL, deposits and withdrawals so far, value held. */
export type PerformancePoint = {
  at: number
  basisCents: bigint
  realisedCents: bigint
  depositsCents: bigint
  withdrawalsCents: bigint
  valueCents: bigint
  operations: number
}

/** The last price seen of a token: `usd18` (USD, 18 decimals) for `amount` base units. */
type LastPrice = { usd18: bigint; amount: bigint }
/** A price from the index (PortfolioReads.indexedPrices): usd18 of one whole unit (10^18 base units). */
export type PriceSeen = { token: string; at: Date; usd18: bigint }
const CENT18 = 10n ** 16n
const WHOLE = 10n ** 18n

/** The prices an operation carries (each valued at its own block): both sides of a swap, a transfer's token. */
function pricesOf(op: LedgerOp): Array<[string, LastPrice]> {
  const at = (token: string | undefined, amount: string | undefined, usd: string | null | undefined): Array<[string, LastPrice]> =>
    token && amount && usd && BigInt(amount) > 0n ? [[token, { usd18: usdCents(usd) * CENT18, amount: BigInt(amount) }]] : []
  if (op.kind === 'swap') return [...at(op.tokenIn, op.amountIn, op.valueInUsd), ...at(op.tokenOut, op.amountOut, op.valueInUsd)]
  if (op.kind === 'claim') return op.claimed.flatMap((c) => at(c.token, c.amount, c.valueUsd))
  if (op.kind === 'launch') return []
  return at(op.token, op.amount, op.valueUsd)
}

/**
 * The ledger replayed up to each point (ms since the epoch, ascending): what was invested and
 * still held (basis), the PnL realised so far, the USD value transferred in (deposits) and out
 * (withdrawals) so far, and the value of what the ledger held then: each token's amount at the
 * last price seen up to then, truncated to the cent per token, or at its remaining basis when no
 * price was seen (no unrealised PnL is made up). Prices seen: each operation's own (its block's
 * prices, as it recorded them) and the index's (`prices`, oldest first), the later one winning.
 *
 * @example
 * performanceSeries([buy(1000n, '100.00'), sell(500n, '80.00')], [t1, t2]) // basis, realised and value after each
 */
export function performanceSeries(ops: readonly LedgerOp[], points: readonly number[], prices: readonly PriceSeen[] = []): PerformancePoint[] {
  const book = new Map<string, Position>()
  const last = new Map<string, LastPrice>()
  let next = 0
  let nextPrice = 0
  let deposits = 0n
  let withdrawals = 0n
  const opAt = (i: number) => ops[i]!.at?.getTime() ?? 0
  return points.map((at) => {
    for (;;) {
      const op = next < ops.length && opAt(next) <= at
      const seen = nextPrice < prices.length && prices[nextPrice]!.at.getTime() <= at
      if (!op && !seen) break
      // At the same time the index's price goes first: the operation's own is block-exact.
      if (seen && (!op || prices[nextPrice]!.at.getTime() <= opAt(next))) {
        const p = prices[nextPrice++]!
        last.set(p.token, { usd18: p.usd18, amount: WHOLE })
        continue
      }
      const o = ops[next++]!
      if (o.kind === 'transfer') withdrawals += usdCents(o.valueUsd)
      if (o.kind === 'receive' && o.valueUsd !== null) deposits += usdCents(o.valueUsd)
      // Fees claimed to a payout wallet leave at once: a withdrawal.
      if (o.kind === 'claim') for (const c of o.claimed) if (!c.held && c.valueUsd !== null) withdrawals += usdCents(c.valueUsd)
      applyOp(book, o)
      for (const [token, price] of pricesOf(o)) last.set(token, price)
    }
    let basisCents = 0n
    let realisedCents = 0n
    let valueCents = 0n
    for (const [token, p] of book) {
      basisCents += p.basisCents
      realisedCents += p.realisedCents
      if (p.amount === 0n) continue
      const price = last.get(token)
      valueCents += price ? (p.amount * price.usd18) / price.amount / CENT18 : p.basisCents
    }
    return { at, basisCents, realisedCents, depositsCents: deposits, withdrawalsCents: withdrawals, valueCents, operations: next }
  })
}

/** Every token the ledger's operations move. */
export function ledgerTokens(ops: readonly LedgerOp[]): string[] {
  const out = new Set<string>()
  for (const op of ops) {
    if (op.kind === 'swap') for (const t of [op.tokenIn, op.tokenOut]) if (t) out.add(t)
    if (op.kind === 'transfer' || op.kind === 'receive') out.add(op.token)
    if (op.kind === 'launch') {
      if (BigInt(op.allocation) > 0n) out.add(op.token)
      if (op.seed) out.add(op.seed.token)
    }
    if (op.kind === 'claim') for (const c of op.claimed) out.add(c.token)
  }
  return [...out]
}

/** A signed dollar string ("-3.07") in cents. */
export const signedCents = (usd: string) => (usd.startsWith('-') ? -usdCents(usd.slice(1)) : usdCents(usd))

/**
 * The PnL fields of a holding: its basis, and unrealised (with a value now) and realised PnL.
 *
 * @example
 * pnlFields({ amount: 750n, basisCents: 9000n, realisedCents: 2000n }, '112.35')
 * // { costBasisUsd: '90.00', unrealisedPnlUsd: '22.35', realisedPnlUsd: '20.00' }
 */
export function pnlFields(p: Position | undefined, valueUsd: string | null) {
  if (!p) return { costBasisUsd: null, unrealisedPnlUsd: null, realisedPnlUsd: null }
  return {
    costBasisUsd: centsToUsd(p.basisCents),
    unrealisedPnlUsd: valueUsd === null ? null : centsToUsd(usdCents(valueUsd) - p.basisCents),
    realisedPnlUsd: centsToUsd(p.realisedCents),
  }
}

/**
 * Totals over every position (realised PnL of tokens no longer held and gas included) and the
 * holdings' values; `keyOf` maps a holding's address to its book key.
 *
 * @example
 * pnlTotals(book, [{ address: tok, valueUsd: '112.35' }], (a) => a ?? '')
 * // { costBasisUsd: '90.00', unrealisedPnlUsd: '22.35', realisedPnlUsd: '20.00', gasUsd: '0.00' }
 */
export function pnlTotals(
  book: ReadonlyMap<string, Position>,
  holdings: ReadonlyArray<{ address: string | null; valueUsd: string | null; /** The line's part of its position (getPortfolio.sharedPosition), when not all of it. */ position?: Position | undefined }>,
  keyOf: (address: string | null) => string,
) {
  let basis = 0n
  let unrealised = 0n
  for (const h of holdings) {
    const p = 'position' in h ? h.position : book.get(keyOf(h.address))
    if (!p || h.valueUsd === null) continue
    basis += p.basisCents
    unrealised += usdCents(h.valueUsd) - p.basisCents
  }
  const realised = [...book.values()].reduce((s, p) => s + p.realisedCents, 0n)
  const gas = -(book.get(GAS_KEY)?.realisedCents ?? 0n)
  return { costBasisUsd: centsToUsd(basis), unrealisedPnlUsd: centsToUsd(unrealised), realisedPnlUsd: centsToUsd(realised), gasUsd: centsToUsd(gas) }
}
