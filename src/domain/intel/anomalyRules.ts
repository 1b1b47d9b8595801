/**
 * Market anomalies, decided from one indexed block range at a time (the indexer calls these in
 * the transaction that writes the range, so a reorg that deletes the range deletes them too).
 * The rules, each a pure function of what the range and the rows before it show:
 *
 * - `whale_movement`: one swap worth at least WHALE_USD (its quote amount at the quote's USD
 *   price of its block).
 * - `liquidity_spike`: the liquidity of a token's curve or pool, its real quote reserve (what a
 *   seller can be paid out), moves by at least LIQUIDITY_MOVE (25%) within one block, from a
 *   reserve that was not empty. Launch pools lock their LP tokens, so on this chain liquidity
 *   moves through trades: a large sale pulls it, a large buy adds to it.
 * - `volume_anomaly`: a token's quote volume in one block is at least VOLUME_MULTIPLE (5) times
 *   its mean over its previous VOLUME_WINDOW (20) blocks with trades, given at least
 *   VOLUME_MIN_HISTORY (3) such blocks.
 * - `large_transfer`: a transfer the indexer follows (to a deposit address) worth at least
 *   TRANSFER_USD.
 *
 * Severity (0-1) grows with how far past its threshold an event is: 0.5 at the threshold, 1 at
 * ten times it (0.5 + 0.5 x log10(ratio), capped).
 */

export const WHALE_USD = 10_000
export const TRANSFER_USD = 10_000
export const LIQUIDITY_MOVE = 0.25
export const VOLUME_MULTIPLE = 5
export const VOLUME_WINDOW = 20
export const VOLUME_MIN_HISTORY = 3

export type AnomalyType = 'whale_movement' | 'liquidity_spike' | 'volume_anomaly' | 'large_transfer'
export const ANOMALY_TYPES: readonly AnomalyType[] = ['whale_movement', 'liquidity_spike', 'volume_anomaly', 'large_transfer']

export type Anomaly = {
  /** Unique per event (the same range indexed twice writes it once). */
  key: string
  type: AnomalyType
  blockNumber: number
  mints: string[]
  description: string
  severity: number
  details: Record<string, string | number | boolean | null>
}

/** 0.5 at the threshold (ratio 1), 1 at ten times it. */
export function severityOf(ratio: number): number {
  if (!(ratio > 0)) return 0
  return Math.round(Math.min(1, Math.max(0, 0.5 + 0.5 * Math.log10(ratio))) * 1000) / 1000
}

export type SwapFact = { txHash: string; logIndex: number; blockNumber: number; token: string; symbol: string; side: string; trader: string; usd: number | null }

/** One anomaly per swap worth at least WHALE_USD. */
export function whaleSwaps(swaps: readonly SwapFact[], thresholdUsd = WHALE_USD): Anomaly[] {
  return swaps
    .filter((s) => s.usd !== null && s.usd >= thresholdUsd)
    .map((s) => ({
      key: `whale:${s.txHash}:${s.logIndex}`, type: 'whale_movement', blockNumber: s.blockNumber, mints: [s.token],
      description: `A ${s.side} of ${s.symbol} worth $${s.usd!.toFixed(2)} in one swap`,
      severity: severityOf(s.usd! / thresholdUsd),
      details: { txHash: s.txHash, trader: s.trader, side: s.side, valueUsd: Math.round(s.usd! * 100) / 100, blockNumber: s.blockNumber },
    }))
}

/** A curve's or pool's real reserves at one point (a snapshot). */
export type ReservePoint = { token: string; symbol: string; source: string; blockNumber: number; tokenReserve: bigint; quoteReserve: bigint }

/**
 * Liquidity moves per token and block: `before` is each token's last point before the range,
 * `points` the range's points in chain order. A move across a graduation (curve to pool) is none.
 */
export function liquidityMoves(before: ReadonlyMap<string, ReservePoint>, points: readonly ReservePoint[], threshold = LIQUIDITY_MOVE): Anomaly[] {
  const last = new Map(before)
  const out: Anomaly[] = []
  const byBlock = new Map<string, { start: ReservePoint | undefined; end: ReservePoint }>()
  for (const p of points) {
    const k = `${p.token}:${p.blockNumber}`
    const seen = byBlock.get(k)
    if (seen) seen.end = p
    else byBlock.set(k, { start: last.get(p.token), end: p })
    last.set(p.token, p)
  }
  for (const { start, end } of byBlock.values()) {
    if (!start || start.source !== end.source || start.quoteReserve === 0n) continue
    const a = Number(start.quoteReserve)
    const b = Number(end.quoteReserve)
    const move = (b - a) / a
    if (Math.abs(move) < threshold) continue
    out.push({
      key: `liquidity:${end.token}:${end.blockNumber}`, type: 'liquidity_spike', blockNumber: end.blockNumber, mints: [end.token],
      description: `${end.symbol} pool liquidity ${move > 0 ? 'rose' : 'fell'} ${(Math.abs(move) * 100).toFixed(1)}% in one block`,
      severity: severityOf(Math.abs(move) / threshold),
      details: { changePct: Math.round(move * 10_000) / 100, quoteReserveBefore: start.quoteReserve.toString(), quoteReserveAfter: end.quoteReserve.toString(), blockNumber: end.blockNumber },
    })
  }
  return out
}

export type BlockVolume = { token: string; symbol: string; blockNumber: number; volume: bigint }

/**
 * Blocks whose volume is VOLUME_MULTIPLE times the token's trailing mean. `history` holds each
 * token's previous block volumes, newest first; `blocks` the range's, in block order.
 */
export function volumeSpikes(history: ReadonlyMap<string, bigint[]>, blocks: readonly BlockVolume[]): Anomaly[] {
  const trail = new Map([...history].map(([k, v]) => [k, [...v]]))
  const out: Anomaly[] = []
  for (const b of blocks) {
    const prior = (trail.get(b.token) ?? []).slice(0, VOLUME_WINDOW)
    if (prior.length >= VOLUME_MIN_HISTORY) {
      const mean = Number(prior.reduce((s, v) => s + v, 0n)) / prior.length
      const ratio = mean > 0 ? Number(b.volume) / mean : Infinity
      if (ratio >= VOLUME_MULTIPLE) {
        out.push({
          key: `volume:${b.token}:${b.blockNumber}`, type: 'volume_anomaly', blockNumber: b.blockNumber, mints: [b.token],
          description: `${b.symbol} traded ${Number.isFinite(ratio) ? ratio.toFixed(1) : 'far more than'}x its trailing mean volume in one block`,
          severity: severityOf(Number.isFinite(ratio) ? ratio / VOLUME_MULTIPLE : 10),
          details: { volume: b.volume.toString(), trailingMean: Math.round(mean).toString(), window: prior.length, blockNumber: b.blockNumber },
        })
      }
    }
    trail.set(b.token, [b.volume, ...prior])
  }
  return out
}

export type TransferFact = { txHash: string; logIndex: number; blockNumber: number; asset: string; to: string; usd: number | null }

/** One anomaly per followed transfer worth at least TRANSFER_USD. */
export function largeTransfers(transfers: readonly TransferFact[], thresholdUsd = TRANSFER_USD): Anomaly[] {
  return transfers
    .filter((t) => t.usd !== null && t.usd >= thresholdUsd)
    .map((t) => ({
      key: `transfer:${t.txHash}:${t.logIndex}`, type: 'large_transfer', blockNumber: t.blockNumber, mints: [t.asset],
      description: `A transfer of ${t.asset} worth $${t.usd!.toFixed(2)}`,
      severity: severityOf(t.usd! / thresholdUsd),
      details: { txHash: t.txHash, to: t.to, valueUsd: Math.round(t.usd! * 100) / 100, blockNumber: t.blockNumber },
    }))
}
