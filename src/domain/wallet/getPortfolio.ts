import type { Address } from 'viem'
import type { PaperPoolView, UsdValue, WalletPorts, WalletToken } from './ports.ts'
import type { PortfolioInput } from './wallet.schema.ts'
import { holdingOf, totalValueUsd, type Holding } from './walletRules.ts'
import { pnlFields, pnlLedger, pnlTotals, type Position } from './pnlRules.ts'

export type GetPortfolioDeps = Pick<WalletPorts, 'agents' | 'tokens' | 'chain' | 'portfolio'>
export type GetPortfolioInput = PortfolioInput & { accountId: string; /** Values the wallet as of this block (the latest when absent). */ blockNumber?: bigint }

/** One held token: what it is, its balance in base units, its holding line and its ledger position. */
export type PortfolioLine = { token: WalletToken; balance: bigint; holding: Holding; position: Position | undefined }

/**
 * The lines of an agent's portfolio and its PnL ledger: ETH always, other tokens when held,
 * each valued in USD (unpriced when its price cannot be read).
 *
 * @example
 * const { agent, lines, totals, totalValueUsd } = await portfolioLines(deps, { accountId, agentId })
 */
export async function portfolioLines(deps: GetPortfolioDeps, input: GetPortfolioInput) {
  const agent = await deps.agents.getOwned(input.accountId, input.agentId)
  const owner = agent.walletAddress
  // A paper agent's holdings are its virtual ledger's (docs/api.md, "Paper agents"), never its wallet's.
  const paper = agent.mode === 'paper' ? ((await deps.portfolio.paperBalances?.(agent.id)) ?? new Map<string, bigint>()) : undefined
  const candidates = new Map<string, WalletToken>()
  const add = (t: WalletToken) => candidates.set(t.native ? 'ETH' : t.address, t)
  for (const t of await deps.portfolio.standardTokens()) add(t)
  const ops = await deps.portfolio.ledgerOps(agent.id)
  const swappedTo = ops.flatMap((op) => (op.kind === 'swap' && op.tokenOut ? [op.tokenOut] : []))
  const others = paper ? [...paper.keys()].filter((k) => k !== 'eth') : await deps.portfolio.otherTokenAddresses(agent.id, owner, swappedTo)
  // A paper launch's virtual token is no token of the chain's: its line is its virtual pool's (valued at the pool's price).
  const pools = paper ? ((await deps.portfolio.paperPools?.(agent.id)) ?? new Map<string, PaperPoolView>()) : new Map<string, PaperPoolView>()
  for (const address of others) {
    if (!address || candidates.has(address.toLowerCase())) continue
    const pool = pools.get(address.toLowerCase())
    const t = pool ? { address: address.toLowerCase() as Address, symbol: pool.symbol, decimals: 18, native: false, verified: false } : await deps.tokens.resolve(address)
    if (t) add(t)
  }
  const book = pnlLedger(ops)
  const prices = await deps.chain.prices(input.blockNumber)
  const held: Array<{ token: WalletToken; balance: bigint; priced: Awaited<ReturnType<typeof prices.usd>> }> = []
  for (const token of candidates.values()) {
    const balance = paper ? (paper.get(token.native ? 'eth' : token.address.toLowerCase()) ?? 0n) : await deps.portfolio.holding(token, owner, input.blockNumber)
    if (balance === null || (balance === 0n && !token.native)) continue
    const pool = pools.get(token.address.toLowerCase())
    held.push({ token, balance, priced: await (pool ? paperPoolUsd(deps, prices, pool, balance) : prices.usd(token, balance)).catch(() => undefined) })
  }
  const lines: PortfolioLine[] = held.map(({ token, balance, priced }) => {
    const position = sharedPosition(book.get(token.address), token, balance, held)
    return { token, balance, position, holding: holdingOf(token, balance, priced, position?.basisCents) }
  })
  const totals = pnlTotals(book, lines.map((l) => ({ address: l.token.address, valueUsd: l.holding.valueUsd, position: l.position })), (a) => a ?? '')
  return { agent, lines, totals, totalValueUsd: totalValueUsd(lines.map((l) => l.holding)) }
}

/**
 * A paper token's holding at its virtual pool's price (its quote reserve over its token reserve),
 * in USD at the quote asset's price; USD of one whole token as `unitUsd18`.
 *
 * @example
 * await paperPoolUsd(deps, prices, { quoteSymbol: 'ETH', quoteReserve: 10n ** 18n, tokenReserve: 10n ** 27n, symbol: 'P', name: 'P' }, 10n ** 24n)
 */
export async function paperPoolUsd(
  deps: Pick<GetPortfolioDeps, 'tokens'>,
  prices: { usd(token: WalletToken, amount: bigint): Promise<UsdValue | undefined> },
  pool: PaperPoolView,
  balance: bigint,
): Promise<UsdValue | undefined> {
  const quote = await deps.tokens.resolve(pool.quoteSymbol)
  if (!quote) return undefined
  const [value, unit] = await Promise.all([
    prices.usd(quote, (balance * pool.quoteReserve) / pool.tokenReserve),
    prices.usd(quote, (10n ** 18n * pool.quoteReserve) / pool.tokenReserve),
  ])
  return value && unit ? { unitUsd18: unit.amountUsd18, amountUsd18: value.amountUsd18 } : undefined
}

/**
 * A line's part of its ledger position. ETH and WETH are one position (keyed by WETH's address):
 * with both held, its amount and basis are split between the two lines by balance, its realised
 * PnL stays on the ETH line, so the totals count it once.
 *
 * @example
 * sharedPosition({ amount: 4n, basisCents: 100n, realisedCents: 7n }, weth, 1n, [{ token: eth, balance: 3n }, { token: weth, balance: 1n }])
 * // { amount: 1n, basisCents: 25n, realisedCents: 0n }
 */
export function sharedPosition(p: Position | undefined, token: WalletToken, balance: bigint, held: ReadonlyArray<{ token: WalletToken; balance: bigint }>): Position | undefined {
  const same = held.filter((h) => h.token.address === token.address)
  if (!p || same.length < 2) return p
  const total = same.reduce((s, h) => s + h.balance, 0n)
  if (total === 0n) return token.native ? p : { amount: 0n, basisCents: 0n, realisedCents: 0n }
  const weth = same.find((h) => !h.token.native)!.balance
  // The WETH line's share, truncated; the ETH line has the rest, so the parts add up.
  const wethPart = { amount: (p.amount * weth) / total, basisCents: (p.basisCents * weth) / total }
  return token.native
    ? { amount: p.amount - wethPart.amount, basisCents: p.basisCents - wethPart.basisCents, realisedCents: p.realisedCents }
    : { ...wethPart, realisedCents: 0n }
}

/**
 * ETH and every token the wallet may hold (quote assets, stocks, tokens it launched, traded or
 * received), valued in USD, with cost basis, unrealised and realised PnL by average cost from the
 * agent's ledger (pnlRules.ts: swaps, transfers in and out, launches, claims), per holding and in
 * total (the realised PnL of tokens no longer held included). `unrealizedPnlUsd` is the earlier spelling of
 * `unrealisedPnlUsd`, kept for clients that read it.
 *
 * @example
 * const p = await getPortfolio(deps, { accountId, agentId })
 * p.totalValueUsd // '15012.50'
 */
export async function getPortfolio(deps: GetPortfolioDeps, input: GetPortfolioInput) {
  const { agent, lines, totals, totalValueUsd } = await portfolioLines(deps, input)
  return {
    agentId: agent.id,
    walletAddress: agent.walletAddress,
    mode: agent.mode,
    holdings: lines.map((l) => ({ ...l.holding, ...pnlFields(l.position, l.holding.valueUsd) })),
    totalValueUsd,
    ...totals,
  }
}
export type Portfolio = Awaited<ReturnType<typeof getPortfolio>>
