import { z } from 'zod'
import { decodeTupleCursor, encodeTupleCursor, limitQuery } from '../paging.schema.ts'

export const leaderboardQuery = z.strictObject({
  limit: limitQuery,
  cursor: z.string().max(200).optional(),
  /** `fees` (creator fees earned, the default) or `pnl` (realised PnL, src/domain/wallet/getPnlLeaderboard.ts). */
  sort_by: z.enum(['fees', 'pnl'], 'One of fees, pnl.').default('fees'),
  /** With `sort_by=pnl`: `live` agents (the default) or `paper` agents only (a separate leaderboard). */
  mode: z.enum(['live', 'paper'], 'One of live, paper.').default('live'),
})

/** The leaderboard's cursor: an offset into the ranking. */
export const encodeOffset = (offset: number) => encodeTupleCursor([offset])

/** The offset a leaderboard cursor carries (0 without one); 422 on `cursor` when it is not one. */
export function decodeOffset(cursor: string | undefined): number {
  return cursor === undefined ? 0 : decodeTupleCursor(cursor, z.tuple([z.number().int().min(0).max(1_000_000)]))[0]
}
