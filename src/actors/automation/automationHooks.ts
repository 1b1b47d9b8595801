import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type pg from 'pg'
import { Webhook } from 'standardwebhooks'
import { InvalidStateError, NotFoundError, ValidationError } from '../../domain/errors.ts'
import { InvalidHookSignatureError } from '../../domain/automations/errors.ts'
import type { Automations } from '../../domain/automations/ports.ts'
import { readHookMessage } from '../../domain/automations/webhookTrigger.ts'
import type { AutomationAction, AutomationTrigger } from '../../domain/automations/automation.types.ts'
import type { FieldErrors } from '../../domain/errors.ts'
import { createAutomationHooksStore } from '../../adapters/db/automationHooks.store.ts'
import { enqueue } from '../runtime/index.ts'
import type { ActorRuntime } from '../runtime/index.ts'

/** The prefix of a signal hook message's dedupe key in its automation's inbox (kept HOOK_MESSAGE_RETENTION_HOURS). */
export const HOOK_MESSAGE_KEY = 'hook:'

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
export function createAutomationHooks({ pool, runtime, automations, checkValues }: {
  pool: pg.Pool
  runtime: Pick<ActorRuntime, 'wake'>
  automations: Pick<Automations, 'get'>
  /** The message's values checked with the action's own rules (checkHookValues): field errors by the body's field. */
  checkValues?: (trigger: Extract<AutomationTrigger, { type: 'webhook' }>, action: AutomationAction, values: Record<string, string>) => Promise<FieldErrors>
}) {
  const store = createAutomationHooksStore(pool)
  const fresh = () => ({ token: randomBytes(24).toString('base64url'), secret: `whsec_${randomBytes(32).toString('base64')}` })
  return {
    async issue({ automationId, accountId }: { automationId: string; accountId: string }) {
      const { token, secret } = fresh()
      await store.issue({ automationId, accountId, tokenSha256: sha256(token), secret })
      return { path: `/hooks/automations/${automationId}/${token}`, secret }
    },

    /**
     * A new URL token and signing secret for the account's automation's hook (404 when it has
     * none). The previous URL, with the previous secret, keeps working for `graceSeconds`
     * (`previousValidUntil`); 0 ends it at once (a leaked URL or secret).
     */
    async rotate({ automationId, accountId, graceSeconds }: { automationId: string; accountId: string; graceSeconds: number }) {
      const a = await automations.get(automationId)
      if (!a || a.accountId !== accountId) throw new NotFoundError('Automation')
      if (a.trigger.type !== 'webhook') throw new NotFoundError('Hook')
      const { token, secret } = fresh()
      const rotated = await store.rotate({ automationId, accountId, tokenSha256: sha256(token), secret, graceSeconds })
      if (!rotated) throw new NotFoundError('Hook')
      const previousValidUntil = graceSeconds > 0 ? new Date(rotated.prevValidUntil).toISOString() : null
      return { path: `/hooks/automations/${automationId}/${token}`, secret, previousValidUntil }
    },

    async receive(m: HookMessage) {
      const row = await store.get(m.automationId)
      const given = Buffer.from(sha256(m.token))
      const matches = (h: string | null | undefined) => !!h && timingSafeEqual(given, Buffer.from(h))
      // The current token, or the previous one in its rotation's grace period: each with its own secret.
      const hook = !row ? undefined : matches(row.token_sha256) ? { secret: row.secret } : matches(row.prev_token_sha256) ? { secret: row.prev_secret! } : undefined
      if (!hook) throw new NotFoundError('Hook')
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
      // A value the action would refuse when it fires is refused now: nothing is recorded, so a
      // bad sender cannot fail firings (and put the automation into error).
      const refused = await checkValues?.(a.trigger, a.action, message.values)
      if (refused && Object.keys(refused).length > 0) throw new ValidationError(refused)
      if (a.status !== 'armed' && a.status !== 'executing') throw new InvalidStateError({ event: 'fire', state: a.status })
      const source = { source: 'webhook', messageId: message.messageId, values: message.values }
      const fresh = await enqueue(pool, {
        actorId: a.automationId, accountId: a.accountId, event: { type: 'automation.trigger', source }, dedupeKey: `${HOOK_MESSAGE_KEY}${a.automationId}:${sha256(message.messageId)}`,
      })
      if (fresh) runtime.wake()
      return { automationId: a.automationId, messageId: message.messageId, accepted: true, duplicate: !fresh }
    },
  }
}
