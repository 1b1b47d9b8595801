import type { Address } from 'viem'
import { lower } from './indexerContext.ts'
import type { DecodeState, EventLog } from './indexedRows.ts'

/*
 * The FeeLocker holds the pool fees of venue-b and graduated tokens: FeesAccrued (a swap's
 * creator and platform shares, in the quote asset or the token) and CreatorFeesClaimed.
 */

/** Second pass, in chain order: fee events, and the fees of the pool swap they belong to. */
export function decodeFeeLockerLog(s: DecodeState, l: EventLog): void {
  const base = { txHash: l.transactionHash, logIndex: l.logIndex, blockNumber: Number(l.blockNumber) }
  if (l.eventName === 'FeesAccrued') {
    const a = l.args as { token: Address; feeToken: Address; amount: bigint; creatorShare: bigint; platformShare: bigint }
    const token = lower(a.token)
    if (!s.tokens.has(token)) return
    const inToken = lower(a.feeToken) === token
    s.fees.push({ ...base, token, kind: 'earned', quote: inToken ? 0n : a.creatorShare, tokenAmount: inToken ? a.creatorShare : 0n })
    const swap = s.lastSwap.get(token)
    if (swap && swap.txHash === l.transactionHash && swap.logIndex < l.logIndex) {
      swap.creatorFee += a.creatorShare
      swap.platformFee += a.platformShare
      swap.feeAsset = inToken ? 'token' : 'quote'
    }
  } else if (l.eventName === 'CreatorFeesClaimed') {
    const a = l.args as { token: Address; quoteAmount: bigint; tokenAmount: bigint }
    if (s.tokens.has(lower(a.token))) s.fees.push({ ...base, token: lower(a.token), kind: 'claimed', quote: a.quoteAmount, tokenAmount: a.tokenAmount })
  }
}
