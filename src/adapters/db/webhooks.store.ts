import type { Queryable } from '../../domain/billing/ports.ts'

/** An endpoint's row (the secrets are read only by the dispatcher and the create/rotate answers). */
export type WebhookEndpointRow = {
  id: string
  account_id: string
  url: string
  events: string[]
  enabled: boolean
  description: string | null
  secret: string
  previous_secret: string | null
  previous_secret_until: Date | null
  failing_since: Date | null
  disabled_reason: string | null
  created_at: Date
  updated_at: Date
}

/** An account event as the fan-out reads it. */
export type AccountEventRow = {
  seq: string
  id: string
  account_id: string
  type: string
  resource_kind: string | null
  resource_id: string | null
  detail: Record<string, unknown>
  data: unknown
  created_at: Date
}

const ENDPOINT_COLUMNS = `id, account_id, url, events, enabled, description, secret, previous_secret, previous_secret_until,
  failing_since, disabled_reason, created_at, updated_at`

/**
 * Webhook endpoints and account events (migration Migration20261127190000_webhooks). Every
 * endpoint query is scoped by account: another account's id reads as absent.
 */
export function createWebhooksStore(db: Queryable) {
  return {
    async insertEndpoint(p: { id: string; accountId: string; url: string; events: string[]; enabled: boolean; description: string | null; secret: string }): Promise<WebhookEndpointRow> {
      const { rows } = await db.query<WebhookEndpointRow>(
        `insert into webhook_endpoint (id, account_id, url, events, enabled, description, secret)
         values ($1, $2, $3, $4, $5, $6, $7) returning ${ENDPOINT_COLUMNS}`,
        [p.id, p.accountId, p.url, p.events, p.enabled, p.description, p.secret],
      )
      return rows[0]!
    },

    async endpoint(accountId: string, id: string): Promise<WebhookEndpointRow | undefined> {
      const { rows } = await db.query<WebhookEndpointRow>(`select ${ENDPOINT_COLUMNS} from webhook_endpoint where id = $1 and account_id = $2`, [id, accountId])
      return rows[0]
    },

    async endpoints(accountId: string): Promise<WebhookEndpointRow[]> {
      const { rows } = await db.query<WebhookEndpointRow>(
        `select ${ENDPOINT_COLUMNS} from webhook_endpoint where account_id = $1 order by created_at, id limit 100`,
        [accountId],
      )
      return rows
    },

    /** Changes the given fields; re-enabling clears the failure streak. */
    async updateEndpoint(accountId: string, id: string, p: { url?: string | undefined; events?: string[] | undefined; enabled?: boolean | undefined; description?: string | null | undefined }): Promise<WebhookEndpointRow | undefined> {
      const { rows } = await db.query<WebhookEndpointRow>(
        `update webhook_endpoint set url = coalesce($3, url), events = coalesce($4, events), enabled = coalesce($5, enabled),
                description = case when $6 then $7 else description end,
                failing_since = case when $5 is true then null else failing_since end,
                disabled_reason = case when $5 is true then null else disabled_reason end,
                updated_at = now()
          where id = $1 and account_id = $2 returning ${ENDPOINT_COLUMNS}`,
        [id, accountId, p.url ?? null, p.events ?? null, p.enabled ?? null, p.description !== undefined, p.description ?? null],
      )
      return rows[0]
    },

    async deleteEndpoint(accountId: string, id: string): Promise<boolean> {
      const { rowCount } = await db.query('delete from webhook_endpoint where id = $1 and account_id = $2', [id, accountId])
      return (rowCount ?? 0) > 0
    },

    /** A new secret; the current one stays valid (signed with too) for `graceMs`. */
    async rotateSecret(accountId: string, id: string, secret: string, graceMs: number): Promise<WebhookEndpointRow | undefined> {
      const { rows } = await db.query<WebhookEndpointRow>(
        `update webhook_endpoint set previous_secret = secret, secret = $3,
                previous_secret_until = now() + $4 * interval '1 millisecond', updated_at = now()
          where id = $1 and account_id = $2 returning ${ENDPOINT_COLUMNS}`,
        [id, accountId, secret, graceMs],
      )
      return rows[0]
    },

    /** Records an event with its data already known (a test event, an endpoint disabled), for one endpoint or all but one. */
    async insertEvent(p: { id: string; accountId: string; type: string; data: unknown; onlyEndpoint?: string; exceptEndpoint?: string }): Promise<void> {
      await db.query(
        `insert into account_event (id, account_id, type, data, only_endpoint, except_endpoint) values ($1, $2, $3, $4::jsonb, $5, $6)
         on conflict (id) do nothing`,
        [p.id, p.accountId, p.type, JSON.stringify(p.data), p.onlyEndpoint ?? null, p.exceptEndpoint ?? null],
      )
    },

    /** Events not yet fanned out, oldest first. */
    async unfannedEvents(limit: number): Promise<AccountEventRow[]> {
      const { rows } = await db.query<AccountEventRow>(
        `select seq, id, account_id, type, resource_kind, resource_id, detail, data, created_at
           from account_event where fanned_out_at is null order by seq limit $1`,
        [limit],
      )
      return rows
    },

    /**
     * Fixes each event's data and creates one delivery per enabled endpoint that wants it, for a
     * batch of events in one statement: when two nodes fan the same event out, only the first
     * one's update matches, and the other's inserts nothing for it. Answers how many deliveries
     * were created.
     */
    async fanOut(batch: ReadonlyArray<{ seq: string; data: unknown }>): Promise<number> {
      if (batch.length === 0) return 0
      const { rowCount } = await db.query({
        name: 'account_event.fan_out',
        text: `with e as (
           update account_event a set data = coalesce(a.data, d.data), fanned_out_at = now()
             from jsonb_to_recordset($1::jsonb) as d(seq bigint, data jsonb)
            where a.seq = d.seq and a.fanned_out_at is null
           returning a.seq, a.id, a.account_id, a.type, a.only_endpoint, a.except_endpoint
         )
         insert into webhook_delivery (id, endpoint_id, account_id, event_seq, next_attempt_at)
         select 'msg_' || substr(md5(e.id || ':' || w.id), 1, 24), w.id, e.account_id, e.seq, now()
           from e join webhook_endpoint w on w.account_id = e.account_id
          where (e.only_endpoint = w.id)
             or (e.only_endpoint is null and w.enabled and w.id is distinct from e.except_endpoint
                 and (e.type = 'webhook.disabled' or e.type = any(w.events) or '*' = any(w.events)))
         on conflict (endpoint_id, event_seq) do nothing`,
        values: [JSON.stringify(batch.map((b) => ({ seq: b.seq, data: b.data ?? null })))],
      })
      return rowCount ?? 0
    },
  }
}

export type WebhooksStore = ReturnType<typeof createWebhooksStore>
