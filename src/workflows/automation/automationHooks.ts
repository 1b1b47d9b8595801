import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type pg from 'pg'
import { Webhook } from 'standardwebhooks'
import { InvalidStateError, NotFoundError, ValidationError } from '../../domain/errors.ts'
import { InvalidHookSignatureError } from '../../domain/automations/errors.ts'
import type { Automations } from '../../domain/automations/ports.ts'
import { readHookMessage } from '../../domain/automations/webhookTrigger.ts'
import { createAutomationHooksStore } from '../../adapters/db/automationHooks.store.ts'
import { enqueue } from '../../runtime/actorStore.ts'
import type { ActorRuntime } from '../../runtime/actorRuntime.ts'

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex')

/** What a signal webhook's request brings: the URL's id and token, the raw body (signed as sent), its headers and parsed body. */
export type HookMessage = { automationId: string; token: string; rawBody: string; headers: Record<string, string | string[] | undefined>; body: unknown }

/**
 * Signal webhooks in: an automation with a `webhook` trigger fires on a POST to its secret URL
 * (`/hooks/automations/:id/:token`). `issue` makes its token (in the URL; only its SHA-256 is
 * kept) and signing secret (`whsec_`, Standard Webhooks). `receive` checks the token, then the
 * signature (required unless the trigger's `auth` is `token`: a sender that cannot sign, such as
 * a TradingView alert; a signature sent anyway must be valid), then the message against the
 * trigger's `values`, and puts one `automation.trigger` in the automation's inbox under the
 * sender's message id: the same message sent again fires nothing more (the inbox keeps its keys).
 *
 * @example
 * const hooks = createAutomationHooks({ pool, runtime, automations })
 * const { token, secret } = await hooks.issue({ automationId, accountId })
 */
export function createAutomationHooks({ pool, runtime, automations }: { pool: pg.Pool; runtime: Pick<ActorRuntime, 'wake'>; automations: Pick<Automations, 'get'> }) {
  const store = createAutomationHooksStore(pool)
  return {
    async issue({ automationId, accountId }: { automationId: string; accountId: string }) {
      const token = randomBytes(24).toString('base64url')
      const secret = `whsec_${randomBytes(32).toString('base64')}`
      await store.issue({ automationId, accountId, tokenSha256: sha256(token), secret })
      return { path: `/hooks/automations/${automationId}/${token}`, secret }
    },

    async receive(m: HookMessage) {
      const hook = await store.get(m.automationId)
      const given = Buffer.from(sha256(m.token))
      if (!hook || !timingSafeEqual(given, Buffer.from(hook.token_sha256))) throw new NotFoundError('Hook')
      const a = await automations.get(m.automationId)
      if (!a || a.trigger.type !== 'webhook') throw new NotFoundError('Hook')
      const header = (name: string) => (typeof m.headers[name] === 'string' ? (m.headers[name] as string) : undefined)
      const signature = header('webhook-signature')
      if (signature !== undefined || a.trigger.auth !== 'token') {
        if (signature === undefined) throw new InvalidHookSignatureError('This hook needs a Standard Webhooks signature (webhook-id, webhook-timestamp, webhook-signature).')
        try {
          new Webhook(hook.secret).verify(m.rawBody, { 'webhook-id': header('webhook-id') ?? '', 'webhook-timestamp': header('webhook-timestamp') ?? '', 'webhook-signature': signature })
        } catch {
          throw new InvalidHookSignatureError('The webhook signature does not verify with this hook\'s secret, or its timestamp is more than 5 minutes off.')
        }
      }
      const message = readHookMessage(a.trigger, { headerId: header('webhook-id'), body: m.body })
      if ('errors' in message) throw new ValidationError(message.errors)
      if (a.status !== 'armed' && a.status !== 'executing') throw new InvalidStateError({ event: 'fire', state: a.status })
      const source = { source: 'webhook', messageId: message.messageId, values: message.values }
      const fresh = await enqueue(pool, {
        actorId: a.automationId, accountId: a.accountId, event: { type: 'automation.trigger', source }, dedupeKey: `hook:${a.automationId}:${sha256(message.messageId)}`,
      })
      if (fresh) runtime.wake()
      return { automationId: a.automationId, messageId: message.messageId, accepted: true, duplicate: !fresh }
    },
  }
}
