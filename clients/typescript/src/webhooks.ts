import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import { AltsError } from './errors.ts'

/** A webhook delivery's body (docs/api.md, Webhooks). */
export type WebhookEvent = { type: string; timestamp: string; data: Record<string, unknown> }
/** Request headers as Node's `IncomingMessage`, the fetch API or a plain object hold them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>

/** A delivery whose signature, id or timestamp does not verify (forged, altered, or older than 5 minutes). */
export class WebhookSignatureError extends AltsError {
  override name = 'WebhookSignatureError'
}

/**
 * Verifies a delivery of the service's webhooks with the Standard Webhooks scheme (the
 * endpoint's `whsec_` secret; HMAC-SHA256 of `webhook-id.webhook-timestamp.body`, either
 * signature during a secret's rotation; a timestamp within 5 minutes) and returns its event.
 * `body` must be the raw body as received, before any JSON parsing. Deduplicate on
 * `webhook-id`: a delivery may come more than once.
 *
 * @example
 * const event = verifyWebhook(process.env.WEBHOOK_SECRET!, rawBody, req.headers) // throws WebhookSignatureError
 * if (event.type === 'swap.confirmed') …
 */
export function verifyWebhook(secret: string, body: string | Uint8Array, headers: WebhookHeaders): WebhookEvent {
  const payload = typeof body === 'string' ? body : new TextDecoder().decode(body)
  const plain: Record<string, string> = {}
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const value = headers instanceof Headers ? headers.get(name) : headers[name]
    const one = Array.isArray(value) ? value.join(' ') : value
    if (one === undefined || one === null) throw new WebhookSignatureError(`Missing ${name} header`)
    plain[name] = one
  }
  try {
    return new Webhook(secret).verify(payload, plain) as WebhookEvent
  } catch (error) {
    if (error instanceof WebhookVerificationError) throw new WebhookSignatureError(error.message, { cause: error })
    throw error
  }
}
