import type { Queryable } from '../../domain/billing/ports.ts'

export type StreamedEvent = { seq: string; id: string; type: string; data: unknown; created_at: Date; fanned: boolean }

/** Where the event sequence stood at one moment, and which transactions could still add below it. */
export type Watermark = { hi: string; xmax: string; xmin: string }

/**
 * The account events a stream reads (`GET /events`). Sequence numbers are drawn before their
 * transactions commit, so a later one can become visible before an earlier one: a stream sends
 * an event only once every transaction that was running when its number was drawn has ended
 * (see `watermark`), so it never skips one.
 */
export function createAccountEventsStore(db: Queryable) {
  return {
    /** The last number drawn, with the current snapshot's bounds (xids below `xmin` have all ended). */
    async watermark(): Promise<Watermark> {
      const { rows } = await db.query<Watermark>(
        `select (select last_value from account_event_seq_seq)::text as hi,
                pg_snapshot_xmax(pg_current_snapshot())::text as xmax, pg_snapshot_xmin(pg_current_snapshot())::text as xmin`,
      )
      return rows[0]!
    },

    /** The account's events after `afterSeq` up to `upToSeq`, oldest first (those meant for every endpoint). */
    async after(accountId: string, afterSeq: string, upToSeq: string, limit = 200): Promise<StreamedEvent[]> {
      const { rows } = await db.query<StreamedEvent>(
        `select seq, id, type, data, created_at, fanned_out_at is not null as fanned from account_event
          where account_id = $1 and seq > $2 and seq <= $3 and only_endpoint is null
          order by seq limit $4`,
        [accountId, afterSeq, upToSeq, limit],
      )
      return rows
    },

    /** The sequence number of one of the account's events (a stream's Last-Event-ID). */
    async seqOf(accountId: string, id: string): Promise<string | undefined> {
      const { rows } = await db.query<{ seq: string }>('select seq from account_event where account_id = $1 and id = $2', [accountId, id])
      return rows[0]?.seq
    },
  }
}

export type AccountEventsStore = ReturnType<typeof createAccountEventsStore>
