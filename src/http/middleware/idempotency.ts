import { createHash } from 'node:crypto'
import { stableUuid } from '../../domain/util/stableUuid.ts'
import type { Context, Middleware } from 'koa'
import { IdempotencyKeyInProgressError, IdempotencyKeyRequiredError, IdempotencyKeyReusedError } from '../../domain/errors.ts'
import { InvalidHeaderError } from '../inputErrors.ts'
import { principalOf } from './auth.ts'
import type { IdempotencyKeys } from '../../adapters/db/idempotency.store.ts'

/**
 * How long an in-flight claim blocks a retry while its node is live (a request stuck on a live
 * node). A claim whose node is gone (retired, or its heartbeat ran out) is taken over at once.
 */
const IN_FLIGHT_LEASE_SECONDS = 60
/** `Retry-After` of a 409 while the key's holder is live: its request is running and answers within seconds. */
const LIVE_HOLDER_RETRY_SECONDS = 1

export type IdempotencyState = {
  key: string
  /** A uuid derived from (account, route, key): the id of the resource the request creates. */
  resourceId: string
}

/** JSON with sorted object keys, so that key order does not change the fingerprint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value ?? null)
}

/**
 * Reads `Idempotency-Key`: 1..255 printable ASCII characters, bare or as a structured-field string.
 * The header's lines as received (`IncomingMessage.headersDistinct`): none is no key; an empty
 * value, or the header sent twice, is a 400 (never taken as no key, nor as the two joined).
 */
export function parseIdempotencyKey(lines: readonly string[] | string | undefined): string | undefined {
  if (lines === undefined) return undefined
  const values = typeof lines === 'string' ? [lines] : lines
  if (values.length !== 1) throw invalidHeader('Idempotency-Key must be sent once (one header line, 1-255 printable characters).')
  let key = values[0]!.trim()
  if (key.startsWith('"')) {
    const m = /^"((?:[^"\\]|\\["\\])*)"$/.exec(key)
    if (!m) throw invalidHeader()
    key = m[1]!.replace(/\\(["\\])/g, '$1')
  }
  if (key.length < 1 || key.length > 255 || !/^[\x20-\x7e]+$/.test(key)) throw invalidHeader()
  return key
}

const invalidHeader = (message = 'Idempotency-Key must be 1-255 printable characters.') => new InvalidHeaderError({ header: 'Idempotency-Key', message })

/**
 * `Idempotency-Key` for money-moving POSTs, scoped to (account, route, key), with a SHA-256
 * fingerprint of the canonical body. A completed 2xx is replayed (`Idempotent-Replayed: true`);
 * the same key with another body is 422 `idempotency_key_reused`; while the first request is in
 * flight on a live node, 409 `idempotency_key_in_progress` with `Retry-After`; a claim whose node
 * is gone (kill -9, lost host) is taken over by the retry at once. Non-2xx answers are not stored (the key can be
 * retried). Keys are kept 48 hours. The route may use `ctx.state.idempotency.resourceId` as the
 * id of what it creates, so that a retry after a crash finds the same resource instead of
 * making a second one. The keys are stored through `core.idempotencyKeys`.
 *
 * @example
 * router.post('/swap/execute', idempotency({ keys: core.idempotencyKeys, route: 'swap/execute', required: false }), handler)
 */
export function idempotency({ keys, route, required }: { keys: IdempotencyKeys; route: string; required: boolean }): Middleware {
  return async (ctx: Context, next) => {
    const key = parseIdempotencyKey(ctx.req.headersDistinct['idempotency-key'])
    if (!key) {
      if (required) {
        throw new IdempotencyKeyRequiredError()
      }
      return next()
    }
    const { accountId } = principalOf(ctx)
    const fingerprint = createHash('sha256').update(canonicalJson(ctx.request.body ?? null)).digest('hex')
    const claim = await keys.claim({ accountId, route, key, fingerprint, leaseSeconds: IN_FLIGHT_LEASE_SECONDS })
    if (!claim) {
      const row = await keys.find(accountId, route, key)
      if (!row) throw new IdempotencyKeyInProgressError()
      if (row.fingerprint !== fingerprint) {
        throw new IdempotencyKeyReusedError()
      }
      if (row.status !== 'completed') {
        // Running on a live node: it answers soon. Its node gone since the claim was refused (it
        // died between the two reads): a retry takes it over now. Else (a claim that names no
        // node) its lease lapses.
        const soon = row.holder_live || row.holder_gone
        const retryAfterSeconds = soon ? LIVE_HOLDER_RETRY_SECONDS : Math.min(row.retry_after ?? 1, IN_FLIGHT_LEASE_SECONDS)
        throw new IdempotencyKeyInProgressError({ retryAfterSeconds })
      }
      ctx.status = row.response_status
      ctx.body = replayBody(row.response_body, ctx.state.requestId as string | undefined)
      ctx.set('Idempotent-Replayed', 'true')
      return
    }
    const resourceId = stableUuid(accountId, route, key)
    ctx.state.idempotency = { key, resourceId } satisfies IdempotencyState
    let stored = false
    try {
      await next()
      if (ctx.status >= 200 && ctx.status < 300) {
        await keys.complete({ accountId, route, key, status: ctx.status, body: ctx.body, claim })
        stored = true
      }
    } finally {
      if (!stored) {
        const release = () => keys.release(accountId, route, key, claim)
        await release().catch((err: unknown) => {
          releaseLater(release)
          throw err
        })
      }
    }
  }
}

/**
 * A key whose release failed (the database away, or failing over) is released again every second
 * for the claim's lease, in the background: the client's retry after the 503 then takes the key
 * as soon as the database is back, instead of a 409 until the lease runs out. The release is the
 * claim's own (it deletes nothing another request took since).
 */
function releaseLater(release: () => Promise<unknown>, attempt = 1): void {
  if (attempt > IN_FLIGHT_LEASE_SECONDS) return
  setTimeout(() => void release().catch(() => releaseLater(release, attempt + 1)), 1_000).unref()
}

/**
 * The stored body with `meta` of this request (so `meta.requestId` matches the `X-Request-Id`
 * header, as on every response), keeping the first request's id as `meta.replayOf`.
 */
function replayBody(body: unknown, requestId: string | undefined): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body
  const { meta, ...rest } = body as { meta?: { requestId?: string } }
  return { ...rest, meta: { requestId, timestamp: new Date().toISOString(), replayOf: meta?.requestId ?? null } }
}

/**
 * `Idempotency-Key` honoured on a POST that creates something (an agent, a key, a webhook, a
 * custom skill, a listing, a bid, a whitelist entry), scoped to the request's path, so that the
 * same key on `/market/A/bids` and `/market/B/bids` stays apart. A replay answers the first
 * answer (a key's value or a webhook's secret included) to the same account only, and is kept
 * with its key (48 hours at most).
 *
 * @example
 * router.post('/webhooks', rejectQuery, requireScope('admin'), idempotentCreation(core.idempotencyKeys), handler)
 */
export function idempotentCreation(keys: IdempotencyKeys): Middleware {
  return (ctx, next) => idempotency({ keys, route: ctx.path.replace(/\/+$/, ''), required: false })(ctx, next)
}
