import type pg from 'pg'
import { erc20Abi, getAddress, type Address } from 'viem'
import type { ChainHandle } from './chain.ts'
import { createPriceReader } from './priceReader.ts'
import { findTokens, hasVerifiedTokenSymbol } from '../db/tokens.store.ts'
import { tokenAmountUsd, usdOf } from '../../domain/tokens/priceMath.ts'

/** A token as swaps, transfers and the portfolio see it. */
export type TokenInfo = {
  /** Lower case; WETH's address for ETH. */
  address: Address
  symbol: string
  decimals: number
  /** True for ETH: held natively, traded as WETH. */
  native: boolean
  /** Quote assets, stocks, and tokens an operator verified. */
  verified: boolean
  /** Launched tokens: how their market is read (curve or pool, against which quote asset). */
  market?: { venue: string; poolAddress: Address | null; quoteSymbol: string } | undefined
}

export type TokenLookup = { token: TokenInfo } | { error: string }

const lower = (a: string) => a.toLowerCase() as Address
const isHexAddress = (v: string) => /^0x[0-9a-fA-F]{40}$/.test(v)

/**
 * Resolves a token reference. Symbols: the quote assets (`ETH` is native ETH, traded as WETH;
 * `WETH` is the token itself), the stocks, then a launched token of the `token` table when its
 * symbol is unique (the manifest's symbols win, so a launch cannot impersonate USDC). A 0x
 * address may be any ERC-20 on chain (symbol and decimals are read from it). Verified: quote
 * assets, stocks, and tokens an operator marked verified.
 *
 * @example
 * const r = await lookupToken({ pool, chain }, 'TSLAx')
 * if ('token' in r) r.token.address
 */
export async function lookupToken(
  { pool, chain }: { pool: pg.Pool; chain: ChainHandle },
  ref: string,
  /** `verifiedSymbolsOnly`: a symbol names a verified token only (an unverified one is named by its address). */
  { verifiedSymbolsOnly = false }: { verifiedSymbolsOnly?: boolean } = {},
): Promise<TokenLookup> {
  const m = chain.manifest
  const weth = lower(m.contracts.weth)
  const byAddress = isHexAddress(ref) ? lower(ref) : undefined
  const sym = ref.toLowerCase()
  if (!byAddress && sym === 'weth') return { token: { address: weth, symbol: 'WETH', decimals: 18, verified: true, native: false } }
  for (const [symbol, q] of Object.entries(m.quoteAssets)) {
    const address = lower(q.address)
    if (symbol.toLowerCase() === sym) return { token: { address, symbol, decimals: q.decimals, verified: true, native: q.native } }
    // An address names the token itself: WETH's address is WETH, not native ETH.
    if (address === byAddress) return { token: { address, symbol: q.native ? 'WETH' : symbol, decimals: q.decimals, verified: true, native: false } }
  }
  for (const s of m.stocks) {
    if (s.symbol.toLowerCase() === sym || lower(s.address) === byAddress) {
      return { token: { address: lower(s.address), symbol: s.symbol, decimals: s.decimals, verified: true, native: false } }
    }
  }
  const rows = await findTokens(pool, chain.chainId, byAddress ? { address: byAddress } : { symbol: sym, verifiedOnly: verifiedSymbolsOnly })
  if (!byAddress) {
    if (rows.length === 0 && verifiedSymbolsOnly) {
      return { error: `No verified token has the symbol "${ref}" (anyone can launch a token under any name); name an unverified token by its 0x address.` }
    }
    if (rows.length === 0) return { error: `Unknown token symbol "${ref}"; use a symbol such as ETH, USDC, TSLAx, or the token's 0x address.` }
    if (rows.length > 1) return { error: `More than one token has the symbol "${ref}"; use its 0x address.` }
  }
  const known = rows[0]
  const address = byAddress ?? lower(known!.address)
  try {
    const [symbol, decimals] = await Promise.all([
      chain.publicClient.readContract({ address: getAddress(address), abi: erc20Abi, functionName: 'symbol' }),
      chain.publicClient.readContract({ address: getAddress(address), abi: erc20Abi, functionName: 'decimals' }),
    ])
    return {
      token: {
        address,
        symbol: known?.symbol ?? symbol,
        decimals,
        // Launching is open to anyone under any name: only an operator's word verifies a launch.
        verified: known?.verified ?? false,
        native: false,
        ...(known ? { market: { venue: known.venue, poolAddress: known.pool_address ? lower(known.pool_address) : null, quoteSymbol: known.quote_symbol } } : {}),
      },
    }
  } catch {
    return { error: 'No ERC-20 token at this address on this chain.' }
  }
}

/**
 * True when a symbol is a verified asset's (ETH, WETH, the quote assets, the stocks, an
 * operator-verified launch), case-insensitively: a launch may not take it.
 *
 * @example
 * await isVerifiedSymbol({ pool, chain }, 'usdc') // true
 */
export async function isVerifiedSymbol({ pool, chain }: { pool: pg.Pool; chain: ChainHandle }, symbol: string): Promise<boolean> {
  const s = symbol.toLowerCase()
  const m = chain.manifest
  if (s === 'weth' || Object.keys(m.quoteAssets).some((q) => q.toLowerCase() === s) || m.stocks.some((t) => t.symbol.toLowerCase() === s)) return true
  return hasVerifiedTokenSymbol(pool, chain.chainId, s)
}

/** `lookupToken` for callers that only need the token (undefined when unknown). */
export async function resolveToken(deps: { pool: pg.Pool; chain: ChainHandle }, ref: string): Promise<TokenInfo | undefined> {
  const r = await lookupToken(deps, ref)
  return 'token' in r ? r.token : undefined
}

/** The wallet's balance of a token (native ETH for ETH). */
export async function balanceOf(chain: ChainHandle, token: TokenInfo, owner: Address, blockNumber?: bigint): Promise<bigint> {
  if (token.native) return chain.publicClient.getBalance({ address: owner, ...(blockNumber === undefined ? {} : { blockNumber }) })
  return chain.publicClient.readContract({ address: token.address, abi: erc20Abi, functionName: 'balanceOf', args: [owner], ...(blockNumber === undefined ? {} : { blockNumber }) })
}

/**
 * USD (usd18) of one whole token and of an amount, read through one price reader (one block):
 * quote assets, stocks, and launched tokens on their curve or pool. Undefined without a market.
 *
 * @example
 * const prices = await createPriceReader(chain)
 * const v = await tokenUsd(chain, prices, usdc, 25_000_000n) // { unitUsd18: 1e18, amountUsd18: 25e18 }
 */
export async function tokenUsd(
  chain: ChainHandle,
  prices: Awaited<ReturnType<typeof createPriceReader>>,
  token: TokenInfo,
  amount: bigint,
): Promise<{ unitUsd18: bigint; amountUsd18: bigint } | undefined> {
  const m = chain.manifest
  const quoteSymbol = token.native || token.address === lower(m.contracts.weth) ? 'ETH' : token.address === lower(m.contracts.usdc) ? 'USDC' : undefined
  if (quoteSymbol) {
    const q = await prices.quote(quoteSymbol)
    return q ? { unitUsd18: q.usd18, amountUsd18: usdOf(amount, token.decimals, q.usd18) } : undefined
  }
  const stock = m.stocks.find((s) => lower(s.address) === token.address)
  if (stock) {
    const p = await prices.stock(stock)
    return { unitUsd18: p.usd18, amountUsd18: usdOf(amount, token.decimals, p.usd18) }
  }
  if (token.market) {
    const p = await prices.launched({ address: token.address, ...token.market })
    const q = await prices.quote(token.market.quoteSymbol)
    const qd = m.quoteAssets[token.market.quoteSymbol]?.decimals
    if (p.usd18 === null || !q || qd === undefined) return undefined
    return { unitUsd18: p.usd18, amountUsd18: tokenAmountUsd(amount, p.price, qd, q.usd18) }
  }
  return undefined
}
