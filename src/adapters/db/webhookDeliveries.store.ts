import { actorTraceAtSql } from '../../actors/runtime/index.ts'
import type { Queryable } from '../../domain/billing/ports.ts'

/** A claimed delivery with what its request needs. */
export type ClaimedDelivery = {
  id: string
  endpoint_id: string
  account_id: string
  attempts: number
  url: string
  secret: string
  previous_secret: string | null
  event_id: string
  type: string
  data: unknown
  event_at: Date
  /** The trace of the transition that recorded the event (its resource's, a W3C traceparent), null when none. */
  trace: string | null
}

export type DeliveryRow = {
  id: string
  event_id: string
  type: string
  status: string
  attempts: number
  last_status_code: number | null
  last_error: string | null
  latency_ms: number | null
  next_attempt_at: Date | null
  delivered_at: Date | null
  created_at: Date
  event_seq: string
}

const LIST_COLUMNS = `d.id, e.id as event_id, e.type, d.status, d.attempts, d.last_status_code, d.last_error, d.latency_ms,
  case when d.status in ('pending', 'failed') then d.next_attempt_at end as next_attempt_at, d.delivered_at, d.created_at, d.event_seq`

/**
 * Webhook deliveries: claimed under a lease with SKIP LOCKED (two nodes never send the same
 * delivery at once; a node that dies mid-request leaves its lease to expire and another sends it
 * again, with the same id), at most `perEndpoint` of one endpoint per claim, and recorded only by
 * the node that holds the lease.
 */
export function createWebhookDeliveriesStore(db: Queryable) {
  return {
    async claim(p: { owner: string; leaseMs: number; limit: number; perEndpoint: number; busyEndpoints: string[] }): Promise<ClaimedDelivery[]> {
      const { rows } = await db.query<ClaimedDelivery>(
        `with cand as (
           select id from (
             select d.id, row_number() over (partition by d.endpoint_id order by d.next_attempt_at, d.id) as rn
               from webhook_delivery d join webhook_endpoint w on w.id = d.endpoint_id
              where d.status in ('pending', 'failed') and d.next_attempt_at <= now() and w.enabled
                and (d.lease_until is null or d.lease_until < now())
                and not (d.endpoint_id = any($5::uuid[]))
           ) x where rn <= $4 limit $3
         ), locked as (
           select d.id from webhook_delivery d join cand using (id)
            where d.status in ('pending', 'failed') and (d.lease_until is null or d.lease_until < now())
              for update of d skip locked
         ), c as (
           update webhook_delivery d set claimed_by = $1, lease_until = now() + $2 * interval '1 millisecond', attempts = d.attempts + 1
             from locked where d.id = locked.id
           returning d.id, d.endpoint_id, d.account_id, d.attempts, d.event_seq
         )
         select c.id, c.endpoint_id, c.account_id, c.attempts, w.url, w.secret,
                case when w.previous_secret_until > now() then w.previous_secret end as previous_secret,
                e.id as event_id, e.type, e.data, e.created_at as event_at, ${actorTraceAtSql('e.resource_id', 'e.created_at')} as trace
           from c join webhook_endpoint w on w.id = c.endpoint_id join account_event e on e.seq = c.event_seq`,
        [p.owner, p.leaseMs, p.limit, p.perEndpoint, p.busyEndpoints],
      )
      return rows
    },

    /** Delivered: the endpoint's failure streak ends. False when the lease was lost meanwhile. */
    async delivered(p: { id: string; owner: string; statusCode: number; latencyMs: number }): Promise<boolean> {
      const { rows } = await db.query<{ n: number }>(
        `with d as (
           update webhook_delivery set status = 'delivered', delivered_at = now(), last_status_code = $3, latency_ms = $4,
                  last_error = null, claimed_by = null, lease_until = null
            where id = $1 and claimed_by = $2 returning endpoint_id
         ), w as (
           update webhook_endpoint w set failing_since = null from d where w.id = d.endpoint_id and w.failing_since is not null
         )
         select count(*)::int as n from d`,
        [p.id, p.owner, p.statusCode, p.latencyMs],
      )
      return (rows[0]?.n ?? 0) > 0
    },

    /**
     * A failed attempt: retried after `delayMs`, or `dead` when that is past `retryWindowMs` since
     * the first attempt. The endpoint's failure streak starts (if not running); an endpoint failing
     * for `disableAfterMs` is disabled: answers its row then, once (the caller tells the others).
     */
    async failed(p: { id: string; owner: string; statusCode: number | null; latencyMs: number | null; error: string; delayMs: number; retryWindowMs: number; disableAfterMs: number }) {
      const { rows } = await db.query<{ id: string; account_id: string; url: string; disabled: boolean }>(
        `with d as (
           update webhook_delivery set last_status_code = $3, latency_ms = $4, last_error = left($5, 500), claimed_by = null, lease_until = null,
                  status = case when retry_from + $7 * interval '1 millisecond' < now() + $6 * interval '1 millisecond' then 'dead' else 'failed' end,
                  next_attempt_at = now() + $6 * interval '1 millisecond'
            where id = $1 and claimed_by = $2 returning endpoint_id
         ), streak as (
           update webhook_endpoint w set failing_since = coalesce(w.failing_since, now()),
                  enabled = w.enabled and not coalesce(w.failing_since < now() - $8 * interval '1 millisecond', false),
                  disabled_reason = case when w.failing_since < now() - $8 * interval '1 millisecond' then 'failing' else w.disabled_reason end
             from d, webhook_endpoint p where w.id = d.endpoint_id and p.id = w.id
           returning w.id, w.account_id, w.url, p.enabled and not w.enabled as disabled
         )
         select id, account_id, url, disabled from streak where disabled`,
        [p.id, p.owner, p.statusCode, p.latencyMs, p.error, p.delayMs, p.retryWindowMs, p.disableAfterMs],
      )
      return rows[0]
    },

    /** An endpoint's deliveries, newest first, after the cursor (the event's seq). */
    async list(p: { accountId: string; endpointId: string; limit: number; beforeSeq?: string | undefined }): Promise<DeliveryRow[]> {
      const { rows } = await db.query<DeliveryRow>(
        `select ${LIST_COLUMNS} from webhook_delivery d join account_event e on e.seq = d.event_seq
          where d.endpoint_id = $1 and d.account_id = $2 and ($3::bigint is null or d.event_seq < $3)
          order by d.event_seq desc limit $4`,
        [p.endpointId, p.accountId, p.beforeSeq ?? null, p.limit],
      )
      return rows
    },

    /** Sends a delivery again now, with a new retry window (its id stays the same). */
    async redeliver(p: { accountId: string; endpointId: string; deliveryId: string }): Promise<DeliveryRow | undefined> {
      const { rows } = await db.query<DeliveryRow>(
        `with d as (
           update webhook_delivery set status = 'pending', next_attempt_at = now(), retry_from = now(), claimed_by = null, lease_until = null
            where id = $3 and endpoint_id = $2 and account_id = $1 returning *
         )
         select ${LIST_COLUMNS} from d join account_event e on e.seq = d.event_seq`,
        [p.accountId, p.endpointId, p.deliveryId],
      )
      return rows[0]
    },

    /** When the next delivery is due (ms from now), if any is waiting. */
    async nextDueInMs(): Promise<number | undefined> {
      const { rows } = await db.query<{ ms: number | null }>(
        `select case when min(next_attempt_at) is null then null else greatest(0, extract(epoch from min(next_attempt_at) - now()) * 1000)::float8 end as ms
           from webhook_delivery where status in ('pending', 'failed')`,
      )
      return rows[0]?.ms ?? undefined
    },
  }
}

export type WebhookDeliveriesStore = ReturnType<typeof createWebhookDeliveriesStore>
