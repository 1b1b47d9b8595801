import { BaseError, getAddress, HttpRequestError, SocketClosedError, TimeoutError, UnknownRpcError, WebSocketRequestError, zeroAddress, type Address } from 'viem'
import type { ChainHandle } from './chain.ts'
import type { LaunchedTokenRef, PricePoint, PricesAtBlock, TokenMarket, TokenMarketPoint } from '../../domain/tokens/ports.ts'
import { AmmPairArtifact, BondingCurveLaunchpadArtifact } from '../../dev/artifacts/index.ts'
import { pegUsd18, priceFromReserves, pow10, tokenUnitUsd, USD_SCALE, usdOf } from '../../domain/tokens/priceMath.ts'
import { pairOf, readOnce } from './pairs.ts'
import { ChainUnavailableError, ServiceUnavailableError } from '../../domain/errors.ts'

export type { LaunchedTokenRef, PricePoint, TokenMarket, TokenMarketPoint } from '../../domain/tokens/ports.ts'

/**
 * USD prices read from the chain at one block (pools, the venue-a curve, the dollar peg).
 */

/** Wraps a failed chain read as 503 `chain_unavailable`. */
export function chainUnavailable(err: unknown): ChainUnavailableError {
  return new ChainUnavailableError(err)
}

/**
 * The 503 `chain_unavailable` for an error that says the node could not be reached or did not
 * answer in time (viem's transport errors, anywhere in the cause chain); undefined for any other
 * error, which keeps its own meaning (a revert is not an outage).
 *
 * @example
 * const e = chainUnavailableOf(err); if (e) throw e
 */
export function chainUnavailableOf(err: unknown): ChainUnavailableError | undefined {
  if (!(err instanceof BaseError)) return undefined
  const transport = err.walk(
    (e) =>
      e instanceof HttpRequestError ||
      e instanceof TimeoutError ||
      e instanceof WebSocketRequestError ||
      e instanceof SocketClosedError ||
      // A WebSocket that could not connect rejects with the socket's error event, which viem
      // passes on as the cause of an UnknownRpcError.
      (e instanceof UnknownRpcError && e.cause instanceof Event),
  )
  return transport ? chainUnavailable(err) : undefined
}

/** The launchpad's own `_price` of a curve: (V + R) * 1e36 / T. */
function curvePrice(c: { virtualQuoteReserve: bigint; quoteReserve: bigint; tokenReserve: bigint }): bigint {
  return c.tokenReserve === 0n ? 0n : ((c.virtualQuoteReserve + c.quoteReserve) * 10n ** 36n) / c.tokenReserve
}

/** What every read of one reader shares: the chain, the pinned block, and the reader's memo. */
type ReadAt = {
  chain: ChainHandle
  block: bigint
  once<T>(key: string, fn: () => Promise<T>): Promise<T>
}

/**
 * Prices read at one block (every read pins `blockNumber`, so figures in one answer agree).
 * Reads are memoized per reader; make one per request. Pass `blockNumber` to read a block the
 * caller already reads at (e.g. `pinToLatestBlock`'s), otherwise the latest block is asked for.
 *
 * @example
 * const prices = await createPriceReader(chain)
 * const eth = await prices.quote('ETH') // { usd18: 3000n * 10n ** 18n, source: wethUsdcPair, sourceType: 'pool' }
 * const m = await prices.market({ address, venue: 'venue-a', quoteSymbol: 'ETH', poolAddress: null }) // { phase: 'curve', price, ... }
 */
export async function createPriceReader(chain: ChainHandle, blockNumber?: bigint) {
  let block: bigint
  try {
    block = blockNumber ?? (await chain.publicClient.getBlockNumber({ cacheTime: 0 }))
  } catch (err) {
    throw chainUnavailable(err)
  }
  const memo = new Map<string, Promise<unknown>>()
  const at: ReadAt = {
    chain,
    block,
    once<T>(key: string, fn: () => Promise<T>): Promise<T> {
      let p = memo.get(key) as Promise<T> | undefined
      if (!p) {
        p = fn().catch((err) => {
          throw err instanceof ServiceUnavailableError ? err : chainUnavailable(err)
        })
        memo.set(key, p)
      }
      return p
    },
  }
  return {
    block,
    quote: (symbol: string) => quote(at, symbol),
    stock: (s: { address: Address; pair: Address; decimals: number }) => at.once(`stock:${s.address}`, () => usdcPoolPrice(at, s.pair, s.address, s.decimals)),
    launched: (t: LaunchedTokenRef) => launched(at, t),
    market: (t: LaunchedTokenRef) => market(at, t),
    amountUsd: (token: Address, amount: bigint) => amountUsd(at, token, amount),
  } satisfies PricesAtBlock & Record<string, unknown>
}
export type PriceReader = Awaited<ReturnType<typeof createPriceReader>>

/** A pair's token0: immutable, so kept per deployment (shared with swap routing). */
function pairToken0(at: ReadAt, pair: Address) {
  const address = pair.toLowerCase() as Address
  return at.once(`token0:${address}`, () =>
    readOnce(at.chain, `token0:${address}`, () => at.chain.publicClient.readContract({ address, abi: AmmPairArtifact.abi, functionName: 'token0' })),
  )
}

/** Reserves of a pair as (reserve of `base`, reserve of the other token): effective (real + virtual) or real. */
function pairReserves(at: ReadAt, pair: Address, base: string, kind: 'effective' | 'real' = 'effective'): Promise<{ base: bigint; other: bigint }> {
  return at.once(`pair:${kind}:${pair.toLowerCase()}:${base.toLowerCase()}`, async () => {
    const functionName = kind === 'effective' ? 'getEffectiveReserves' : 'getReserves'
    const [token0, [r0, r1]] = await Promise.all([
      pairToken0(at, pair),
      at.chain.publicClient.readContract({ address: pair, abi: AmmPairArtifact.abi, functionName, blockNumber: at.block }),
    ])
    return token0.toLowerCase() === base.toLowerCase() ? { base: r0, other: r1 } : { base: r1, other: r0 }
  })
}

/** The venue-a curve of a token (all zero for a token that never launched there). */
function curveOf(at: ReadAt, token: Address) {
  return at.once(`curve:${token.toLowerCase()}`, () =>
    at.chain.publicClient.readContract({
      address: at.chain.manifest.contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi, functionName: 'getCurve', args: [getAddress(token)], blockNumber: at.block,
    }),
  )
}

/** USD per whole unit of `base` in a pool against USDC (taken as one dollar). */
async function usdcPoolPrice(at: ReadAt, pair: Address, base: string, baseDecimals: number): Promise<PricePoint> {
  const r = await pairReserves(at, pair, base)
  const usdcDecimals = at.chain.manifest.quoteAssets.USDC?.decimals ?? 6
  const usd18 = r.base === 0n ? 0n : (r.other * pow10(baseDecimals) * USD_SCALE) / (r.base * pow10(usdcDecimals))
  return { usd18, source: pair, sourceType: 'pool' }
}

/** USD per whole unit of a quote asset by symbol (ETH from the WETH/USDC pool, USDC at 1); null if unknown. */
function quote(at: ReadAt, symbol: string): Promise<PricePoint | null> {
  const peg = pegUsd18(symbol)
  if (peg !== null) return Promise.resolve({ usd18: peg, source: null, sourceType: 'peg' })
  const { contracts, quoteAssets } = at.chain.manifest
  if (symbol === 'ETH') return at.once('eth', () => usdcPoolPrice(at, contracts.wethUsdcPair, contracts.weth, quoteAssets.ETH?.decimals ?? 18))
  return Promise.resolve(null)
}

type Venue = { kind: 'curve'; curve: Awaited<ReturnType<typeof curveOf>> } | { kind: 'pool'; pool: Address }

/** Where a launched token trades at this block: its venue-a curve until it graduates, its AMM pool otherwise. */
async function venueOf(at: ReadAt, t: LaunchedTokenRef): Promise<Venue> {
  const address = getAddress(t.address)
  if (t.venue === 'venue-a') {
    const curve = await curveOf(at, address)
    if (!curve.graduated) return { kind: 'curve', curve }
    return { kind: 'pool', pool: curve.pair }
  }
  if (!t.poolAddress) throw new Error(`token ${t.address} has no pool`)
  return { kind: 'pool', pool: getAddress(t.poolAddress) }
}

/** A launched token's price: the venue-a curve before graduation, its AMM pool otherwise. */
function launched(at: ReadAt, t: LaunchedTokenRef): Promise<TokenMarketPoint> {
  return at.once(`token:${t.address.toLowerCase()}`, async () => {
    const v = await venueOf(at, t)
    let point: { price: bigint; source: Address; sourceType: 'pool' | 'curve'; phase: 'curve' | 'pool' }
    if (v.kind === 'curve') {
      point = { price: curvePrice(v.curve), source: at.chain.manifest.contracts.venueA, sourceType: 'curve', phase: 'curve' }
    } else {
      const r = await pairReserves(at, v.pool, t.address)
      point = { price: priceFromReserves(r.other, r.base), source: v.pool, sourceType: 'pool', phase: 'pool' }
    }
    const decimals = at.chain.manifest.quoteAssets[t.quoteSymbol]?.decimals
    const q = await quote(at, t.quoteSymbol)
    const usd18 = q && decimals !== undefined ? tokenUnitUsd(point.price, decimals, q.usd18) : null
    return { ...point, usd18 }
  })
}

/** A launched token's full market: real and effective reserves, graduation threshold (curve), phase and price. */
function market(at: ReadAt, t: LaunchedTokenRef): Promise<TokenMarket> {
  return at.once(`market:${t.address.toLowerCase()}`, async () => {
    const v = await venueOf(at, t)
    if (v.kind === 'curve') {
      const c = v.curve
      return {
        phase: 'curve', source: at.chain.manifest.contracts.venueA, sourceType: 'curve',
        tokenReserve: c.tokenReserve, quoteReserve: c.quoteReserve,
        effectiveTokenReserve: c.tokenReserve, effectiveQuoteReserve: c.virtualQuoteReserve + c.quoteReserve,
        graduationThreshold: c.graduationThreshold, price: curvePrice(c),
      }
    }
    const [effective, real] = await Promise.all([pairReserves(at, v.pool, t.address), pairReserves(at, v.pool, t.address, 'real')])
    return {
      phase: 'pool', source: v.pool, sourceType: 'pool',
      tokenReserve: real.base, quoteReserve: real.other,
      effectiveTokenReserve: effective.base, effectiveQuoteReserve: effective.other,
      graduationThreshold: null, price: priceFromReserves(effective.other, effective.base),
    }
  })
}

type HubRate = { hub: 'ETH' | 'USDC'; num: bigint; den: bigint }

/**
 * Mid rate of any token against a hub (USDC or WETH), in hub base units per token base unit
 * (num / den): its active venue-a curve when quoted in a hub, else its pool with USDC, else with WETH.
 */
function hubRate(at: ReadAt, token: Address): Promise<HubRate | null> {
  const { contracts } = at.chain.manifest
  return at.once(`rate:${token.toLowerCase()}`, async () => {
    const c = await curveOf(at, token)
    const curveQuote = c.quote.toLowerCase()
    const hubs = { [contracts.usdc.toLowerCase()]: 'USDC', [contracts.weth.toLowerCase()]: 'ETH' } as Record<string, 'ETH' | 'USDC'>
    if (c.creator !== zeroAddress && !c.graduated && hubs[curveQuote]) {
      return { hub: hubs[curveQuote], num: c.virtualQuoteReserve + c.quoteReserve, den: c.tokenReserve }
    }
    for (const [hub, address] of [['USDC', contracts.usdc], ['ETH', contracts.weth]] as const) {
      const pair = await pairOf(at.chain, token, address)
      if (!pair) continue
      const r = await pairReserves(at, pair, token)
      if (r.base > 0n && r.other > 0n) return { hub, num: r.other, den: r.base }
    }
    return null
  })
}

/**
 * USD value (usd18) of `amount` base units of any token at mid price (no fees, no impact): USDC
 * at 1, WETH as ETH, a venue-a curve token from its curve, anything else from its pool with
 * USDC or WETH; null when no such market prices it.
 */
async function amountUsd(at: ReadAt, token: Address, amount: bigint): Promise<bigint | null> {
  const t = token.toLowerCase()
  const { contracts } = at.chain.manifest
  if (t === contracts.usdc.toLowerCase() || t === contracts.weth.toLowerCase()) return hubUsd(at, t === contracts.usdc.toLowerCase() ? 'USDC' : 'ETH', amount)
  const r = await hubRate(at, token)
  if (!r || r.den === 0n) return null
  // Converted to the hub's base units first, as a trade would pay out.
  return hubUsd(at, r.hub, (amount * r.num) / r.den)
}

/** usd18 of an amount of a hub asset (USDC 6 decimals, ETH 18 unless the manifest says otherwise). */
async function hubUsd(at: ReadAt, hub: 'ETH' | 'USDC', amount: bigint): Promise<bigint | null> {
  const q = await quote(at, hub)
  if (!q) return null
  return usdOf(amount, at.chain.manifest.quoteAssets[hub]?.decimals ?? (hub === 'USDC' ? 6 : 18), q.usd18)
}
