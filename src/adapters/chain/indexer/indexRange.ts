import { getAddress } from 'viem'
import { mapLimit } from '../../../domain/util/mapLimit.ts'
import { decodePoolLog, fetchPoolLogs, poolParams, poolsOf } from './ammPool.ts'
import { launcherEvents, launchpadEvents, lockerEvents, selfFundedEvent } from './events.ts'
import { decodeFeeLockerLog } from './feeLocker.ts'
import { lower, RPC_PARALLEL, type IndexerContext } from './indexerContext.ts'
import type { DecodeState, EventLog, FoundToken, Graduation, NewToken, TokenInfo } from './indexedRows.ts'
import { rangeHeaders } from './rangeHeaders.ts'
import { selfFundedLaunch } from './selfFunded.ts'
import { knownTokens, latestCurveState } from './storedState.ts'
import { decodeVenueALog, venueAGraduated, venueATokenCreated } from './venueA.ts'
import { venueBPoolLaunched } from './venueB.ts'
import { writeRange } from './writeRange.ts'
import { findDeposits } from './deposits.ts'
import { findTransfersIn } from './agentTransfers.ts'
import { blockReader } from './blockReader.ts'
import { readQuoteUsd } from './quoteUsd.ts'

/**
 * Indexes blocks [from, to] (one getLogs per source, one database transaction). Pass 1 finds
 * the tokens and pools created in the range, since a new pool's Sync comes before the launch
 * event; pass 2 decodes every log in chain order. Throws RangeReorgedError when the chain
 * changed while the range was read.
 */
export async function indexRange(ctx: IndexerContext, from: number, to: number, head: number): Promise<void> {
  const range = { fromBlock: BigInt(from), toBlock: BigInt(to) }
  const [venueLogs, selfFundedLogs] = (await Promise.all([
    ctx.client.getLogs({
      ...range, strict: true, address: [ctx.contracts.venueA, ctx.contracts.venueB, ctx.contracts.feeLocker],
      events: [...launchpadEvents, ...launcherEvents, ...lockerEvents],
    }),
    ctx.client.getLogs({ ...range, strict: true, event: selfFundedEvent }),
  ])) as [EventLog[], EventLog[]]

  const tokens = await knownTokens(ctx)
  const { newTokens, graduations } = await findLaunches(ctx, tokens, venueLogs, selfFundedLogs)
  const byPool = poolsOf(tokens)
  const poolLogs = await fetchPoolLogs(ctx, range, byPool)

  const tailFrom = Math.max(from, to - ctx.reorgDepth + 1, head - ctx.reorgDepth + 1)
  const allLogs = [...venueLogs, ...selfFundedLogs, ...poolLogs]
  const blocks = blockReader(ctx)
  const deposits = await findDeposits(ctx, from, to, blocks)
  const transfersIn = await findTransfersIn(ctx, from, to, blocks)
  const headers = await rangeHeaders(ctx, { from, to, tailFrom, logs: [...allLogs, ...deposits, ...transfersIn] })

  // Traders of pool swaps are the accounts that sent the transactions.
  const swapTxs = [...new Set(poolLogs.filter((l) => l.eventName === 'Swap').map((l) => l.transactionHash))]
  const senders = new Map<string, string>()
  await mapLimit(swapTxs, RPC_PARALLEL, async (hash) => {
    const t = await ctx.client.getTransaction({ hash })
    senders.set(hash, lower(t.from))
  })

  const curveTokens = [...tokens.values()].filter((t) => t.venue === 'venue-a').map((t) => t.address)
  const state: DecodeState = {
    tokens, newTokens, byPool, senders, curveState: await latestCurveState(ctx, curveTokens),
    lastSwap: new Map(), trades: [], snapshots: [], fees: [],
  }
  allLogs.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1))
  for (const l of allLogs) decodeLog(ctx, state, l)

  // Each trade's quote asset in USD at its block (candles, cost basis, anomalies).
  const quoteOf = (token: string) => ctx.quoteSymbols.get(tokens.get(token)?.quoteAddress ?? '')
  const quoteUsdAt = await readQuoteUsd(ctx, [
    ...state.trades.map((t) => ({ quoteSymbol: quoteOf(t.token), blockNumber: t.blockNumber })),
    ...deposits.map((d) => ({ quoteSymbol: d.asset as string, blockNumber: Number(d.blockNumber) })),
  ])
  for (const t of state.trades) t.quoteUsd18 = quoteUsdAt(quoteOf(t.token), t.blockNumber)

  await writeRange(ctx, { from, to, newTokens, graduations, tokens, trades: state.trades, snapshots: state.snapshots, fees: state.fees, deposits, transfersIn, headers, tailFrom, quoteUsdAt })
  if (newTokens.size || state.trades.length) ctx.log.debug({ from, to, tokens: newTokens.size, trades: state.trades.length }, 'indexed')
}

/** Pass 2: hands each log to the decoder of the contract that emitted it. */
function decodeLog(ctx: IndexerContext, state: DecodeState, l: EventLog): void {
  const addr = lower(l.address)
  if (addr === ctx.venueA) decodeVenueALog(state, l)
  else if (addr === ctx.feeLocker) decodeFeeLockerLog(state, l)
  else {
    const pool = state.byPool.get(addr)
    if (pool) decodePoolLog(state, pool, l)
  }
}

/**
 * Pass 1: the tokens launched in the range (added to `tokens`) and the curves that graduated
 * into a pool (whose parameters are read at that block).
 */
async function findLaunches(ctx: IndexerContext, tokens: Map<string, TokenInfo>, venueLogs: EventLog[], selfFundedLogs: EventLog[]) {
  const newTokens = new Map<string, NewToken>()
  const graduations: Graduation[] = []
  const found = (t: FoundToken | undefined) => {
    if (!t) return
    newTokens.set(t.row.address, t.row)
    tokens.set(t.info.address, t.info)
  }
  await mapLimit(venueLogs, RPC_PARALLEL, async (l) => {
    const addr = lower(l.address)
    if (addr === ctx.venueA && l.eventName === 'TokenCreated') found(await venueATokenCreated(ctx, l))
    else if (addr === ctx.venueB && l.eventName === 'PoolLaunched') found(await venueBPoolLaunched(ctx, l))
    else if (addr === ctx.venueA && l.eventName === 'Graduated') graduations.push(venueAGraduated(l))
  })
  for (const g of graduations) {
    const t = tokens.get(g.token)
    if (!t) continue
    const p = await poolParams(ctx, getAddress(g.pair), g.token, BigInt(g.blockNumber))
    Object.assign(t, { pool: g.pair, ...p })
    const nt = newTokens.get(g.token)
    if (nt) Object.assign(nt, { poolTokenIsToken0: p.tokenIsToken0, poolVirtualToken: p.virtualToken, poolVirtualQuote: p.virtualQuote })
  }
  await mapLimit(selfFundedLogs, RPC_PARALLEL, async (l) => found(await selfFundedLaunch(ctx, l)))
  return { newTokens, graduations }
}
