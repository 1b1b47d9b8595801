import type { Address } from 'viem'
import { BondingCurveLaunchpadArtifact } from '../../../dev/artifacts/index.ts'
import { priceFromReserves } from '../../../domain/tokens/priceMath.ts'
import { lower, quoteSymbolOf, type IndexerContext } from './indexerContext.ts'
import type { DecodeState, EventLog, FoundToken, Graduation } from './indexedRows.ts'

/*
 * venue-a, the bonding-curve launchpad: TokenCreated (a token and its curve), Trade (a buy or
 * sell on the curve, fees in the quote asset), Graduated (the curve moved into an AMM pool),
 * CreatorFeesClaimed.
 */

/** A token created on the curve, with the curve's parameters at that block. */
export async function venueATokenCreated(ctx: IndexerContext, l: EventLog): Promise<FoundToken> {
  const a = l.args as { token: Address; creator: Address; quote: Address; name: string; symbol: string; supply: bigint }
  const blockNumber = l.blockNumber
  const curve = await ctx.client.readContract({
    address: ctx.contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi, functionName: 'getCurve', args: [a.token], blockNumber,
  })
  const token = lower(a.token)
  return {
    row: {
      address: token, venue: 'venue-a', symbol: a.symbol, name: a.name, quoteAddress: lower(a.quote),
      quoteSymbol: await quoteSymbolOf(ctx, lower(a.quote), blockNumber), creator: lower(a.creator), totalSupply: a.supply,
      poolAddress: null, verified: false, blockNumber: Number(blockNumber), txHash: l.transactionHash,
      curveVirtualQuote: curve.virtualQuoteReserve, graduationThreshold: curve.graduationThreshold,
      poolTokenIsToken0: null, poolVirtualToken: null, poolVirtualQuote: null,
    },
    info: { address: token, venue: 'venue-a', quoteAddress: lower(a.quote), pool: null, tokenIsToken0: null, virtualToken: 0n, virtualQuote: curve.virtualQuoteReserve },
  }
}

export function venueAGraduated(l: EventLog): Graduation {
  const a = l.args as { token: Address; pair: Address }
  return { token: lower(a.token), pair: lower(a.pair), blockNumber: Number(l.blockNumber) }
}

/** Second pass, in chain order: the curve's snapshots, trades and creator fees. */
export function decodeVenueALog(s: DecodeState, l: EventLog): void {
  const blockNumber = Number(l.blockNumber)
  const base = { txHash: l.transactionHash, logIndex: l.logIndex, blockNumber }
  if (l.eventName === 'TokenCreated') {
    const a = l.args as { token: Address; supply: bigint }
    const token = lower(a.token)
    const v = s.newTokens.get(token)?.curveVirtualQuote ?? 0n
    s.curveState.set(token, { tokenReserve: a.supply, quoteReserve: 0n })
    s.snapshots.push({ token, blockNumber, logIndex: l.logIndex, source: 'curve', tokenReserve: a.supply, quoteReserve: 0n, price: priceFromReserves(v, a.supply) })
  } else if (l.eventName === 'Trade') {
    const a = l.args as { token: Address; trader: Address; isBuy: boolean; quoteAmount: bigint; tokenAmount: bigint; creatorFee: bigint; platformFee: bigint; priceAfter: bigint }
    const token = lower(a.token)
    if (!s.tokens.has(token)) return
    s.trades.push({
      ...base, token, venue: 'venue-a', source: 'curve', trader: lower(a.trader), side: a.isBuy ? 'buy' : 'sell',
      quoteAmount: a.quoteAmount, tokenAmount: a.tokenAmount, creatorFee: a.creatorFee, platformFee: a.platformFee,
      feeAsset: 'quote', priceAfter: a.priceAfter,
    })
    if (a.creatorFee > 0n) s.fees.push({ ...base, token, kind: 'earned', quote: a.creatorFee, tokenAmount: 0n })
    const r = s.curveState.get(token)
    if (r) {
      const fee = a.creatorFee + a.platformFee
      if (a.isBuy) {
        r.tokenReserve -= a.tokenAmount
        r.quoteReserve += a.quoteAmount - fee
      } else {
        r.tokenReserve += a.tokenAmount
        r.quoteReserve -= a.quoteAmount + fee
      }
      s.snapshots.push({ token, blockNumber, logIndex: l.logIndex, source: 'curve', tokenReserve: r.tokenReserve, quoteReserve: r.quoteReserve, price: a.priceAfter })
    }
  } else if (l.eventName === 'CreatorFeesClaimed') {
    const a = l.args as { token: Address; amount: bigint }
    if (s.tokens.has(lower(a.token))) s.fees.push({ ...base, token: lower(a.token), kind: 'claimed', quote: a.amount, tokenAmount: 0n })
  }
}
