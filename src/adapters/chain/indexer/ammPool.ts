import { getAddress, type Address } from 'viem'
import { AmmPairArtifact } from '../../../dev/artifacts/index.ts'
import { priceFromReserves } from '../../../domain/tokens/priceMath.ts'
import { poolEvents } from './events.ts'
import { lower, type IndexerContext } from './indexerContext.ts'
import type { DecodeState, EventLog, TokenInfo, TradeRow } from './indexedRows.ts'

/*
 * AMM pairs of launched tokens (venue-b pools, graduated curves, self-funded pools): Swap (a
 * trade; its trader is the transaction's sender, its fees come from the FeeLocker) and Sync
 * (reserves after it, hence the price).
 */

/** Pool addresses per getLogs call. */
const POOL_CHUNK = 500

/** Which side of the pair the token is, and the pair's virtual reserves, at `blockNumber`. */
export async function poolParams({ client }: IndexerContext, pair: Address, token: string, blockNumber: bigint) {
  const p = { address: pair, abi: AmmPairArtifact.abi, blockNumber } as const
  const [token0, v0, v1] = await Promise.all([
    client.readContract({ ...p, functionName: 'token0' }),
    client.readContract({ ...p, functionName: 'virtualReserve0' }),
    client.readContract({ ...p, functionName: 'virtualReserve1' }),
  ])
  const isToken0 = lower(token0) === token
  return { tokenIsToken0: isToken0, virtualToken: isToken0 ? v0 : v1, virtualQuote: isToken0 ? v1 : v0 }
}

/** Every pool with known parameters, by address. */
export function poolsOf(tokens: Map<string, TokenInfo>): Map<string, TokenInfo> {
  const byPool = new Map<string, TokenInfo>()
  for (const t of tokens.values()) if (t.pool && t.tokenIsToken0 !== null) byPool.set(t.pool, t)
  return byPool
}

/** Swap and Sync logs of these pools in the range, `POOL_CHUNK` addresses per request. */
export async function fetchPoolLogs(ctx: IndexerContext, range: { fromBlock: bigint; toBlock: bigint }, byPool: Map<string, TokenInfo>): Promise<EventLog[]> {
  const pools = [...byPool.keys()].map((p) => getAddress(p))
  const chunks = await Promise.all(
    Array.from({ length: Math.ceil(pools.length / POOL_CHUNK) }, (_, i) =>
      ctx.client.getLogs({ ...range, strict: true, address: pools.slice(i * POOL_CHUNK, (i + 1) * POOL_CHUNK), events: poolEvents }),
    ),
  )
  return chunks.flat() as EventLog[]
}

/** Second pass, in chain order: a pool's reserve snapshots and swaps. */
export function decodePoolLog(s: DecodeState, t: TokenInfo, l: EventLog): void {
  const blockNumber = Number(l.blockNumber)
  if (l.eventName === 'Sync') {
    const a = l.args as { reserve0: bigint; reserve1: bigint }
    const [tokenReserve, quoteReserve] = t.tokenIsToken0 ? [a.reserve0, a.reserve1] : [a.reserve1, a.reserve0]
    const price = priceFromReserves(quoteReserve + t.virtualQuote, tokenReserve + t.virtualToken)
    s.snapshots.push({ token: t.address, blockNumber, logIndex: l.logIndex, source: 'pool', tokenReserve, quoteReserve, price })
    const swap = s.lastSwap.get(t.address)
    if (swap && swap.txHash === l.transactionHash && swap.priceAfter === null) swap.priceAfter = price
  } else if (l.eventName === 'Swap') {
    const a = l.args as { amount0In: bigint; amount1In: bigint; amount0Out: bigint; amount1Out: bigint }
    const [tokenIn, quoteIn, tokenOut, quoteOut] = t.tokenIsToken0
      ? [a.amount0In, a.amount1In, a.amount0Out, a.amount1Out]
      : [a.amount1In, a.amount0In, a.amount1Out, a.amount0Out]
    const buy = tokenOut > 0n
    const trade: TradeRow = {
      txHash: l.transactionHash, logIndex: l.logIndex, blockNumber, token: t.address, venue: t.venue, source: 'pool',
      trader: s.senders.get(l.transactionHash) ?? '', side: buy ? 'buy' : 'sell', quoteAmount: buy ? quoteIn : quoteOut,
      tokenAmount: buy ? tokenOut : tokenIn, creatorFee: 0n, platformFee: 0n, feeAsset: buy ? 'quote' : 'token', priceAfter: null,
    }
    s.trades.push(trade)
    s.lastSwap.set(t.address, trade)
  }
}
