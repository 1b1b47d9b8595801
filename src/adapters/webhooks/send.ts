import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { startSpan } from '../telemetry/spans.ts'
import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { guardedLookup, hostOf, refusedAddress, TargetRefusedError, type TargetPolicy } from './target.ts'

/** Response bytes read at most; the rest is not read (the body is never used). */
const MAX_RESPONSE_BYTES = 64 * 1024

export type WebhookMessage = { id: string; type: string; timestamp: string; data: unknown }
export type SendResult = { ok: boolean; statusCode: number | null; latencyMs: number; error: string | null }

/**
 * The Standard Webhooks signature header: one `v1,<sig>` per secret, space-separated (the current
 * secret and, for a while after a rotation, the previous one).
 */
export function signatureHeader(secrets: string[], msgId: string, at: Date, payload: string): string {
  return secrets.map((s) => new Webhook(s).sign(msgId, at, payload)).join(' ')
}

/**
 * POSTs one signed delivery. The target is checked again here (an IP literal before the
 * request, a name in the connection's lookup), redirects are not followed (a 3xx is a failure),
 * the whole request is bounded by `timeoutMs` and at most 64 KB of the answer is read. Never throws.
 */
export async function sendWebhook(target: string, msg: WebhookMessage, options: { secrets: string[]; policy: TargetPolicy; timeoutMs: number; trace?: string | null }): Promise<SendResult> {
  // One span per delivery attempt (docs/operations.md, Traces), an error when it did not succeed,
  // in the trace of what recorded the event (`trace`, a stored traceparent) when one is given.
  const span = startSpan('webhook.deliver', { 'webhook.id': msg.id, 'webhook.event_type': msg.type, 'server.address': safeHost(target) }, SpanKind.CLIENT, options.trace)
  const result = await deliver(target, msg, options)
  if (span.isRecording()) {
    if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode)
    if (!result.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? 'failed' })
  }
  span.end()
  return result
}

function safeHost(target: string): string {
  try {
    return new URL(target).host
  } catch {
    return ''
  }
}

async function deliver(
  target: string,
  msg: WebhookMessage,
  { secrets, policy, timeoutMs }: { secrets: string[]; policy: TargetPolicy; timeoutMs: number },
): Promise<SendResult> {
  const started = Date.now()
  const result = (statusCode: number | null, error: string | null): SendResult => ({
    ok: error === null && statusCode !== null && statusCode >= 200 && statusCode < 300,
    statusCode,
    latencyMs: Date.now() - started,
    error,
  })
  let url: URL
  try {
    url = new URL(target)
    if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) throw new TargetRefusedError(`scheme ${url.protocol} refused`)
    const host = hostOf(url)
    const why = isIP(host) ? refusedAddress(host, policy) : undefined
    if (why) throw new TargetRefusedError(why)
  } catch (err) {
    return result(null, `target refused: ${(err as Error).message}`)
  }
  const payload = JSON.stringify({ type: msg.type, timestamp: msg.timestamp, data: msg.data })
  const at = new Date()
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'agent-launch-trading-webhooks/1',
    'webhook-id': msg.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatureHeader(secrets, msg.id, at, payload),
  }
  return new Promise<SendResult>((resolve) => {
    let settled = false
    const finish = (statusCode: number | null, error: string | null) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      req.destroy()
      resolve(result(statusCode, error))
    }
    const lib = url.protocol === 'https:' ? https : http
    const req = lib.request(url, { method: 'POST', headers, lookup: guardedLookup(policy) as never, agent: false }, (res) => {
      const status = res.statusCode ?? 0
      let read = 0
      res.on('data', (chunk: Buffer) => {
        read += chunk.length
        if (read >= MAX_RESPONSE_BYTES) finish(status, status >= 300 && status < 400 ? `redirect not followed (${status})` : status >= 200 && status < 300 ? null : `answered ${status}`)
      })
      res.on('end', () => finish(status, status >= 300 && status < 400 ? `redirect not followed (${status})` : status >= 200 && status < 300 ? null : `answered ${status}`))
      res.on('error', (err) => finish(status, err.message))
    })
    const timer = setTimeout(() => finish(null, `timed out after ${timeoutMs} ms`), timeoutMs)
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish(null, err instanceof TargetRefusedError || err.code === 'ETARGETREFUSED' ? `target refused: ${err.message}` : err.message),
    )
    req.end(payload)
  })
}
