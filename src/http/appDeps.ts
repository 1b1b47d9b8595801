import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'
import type { RateLimitStore } from './rateLimit.ts'
import type { Core } from '../app/coreApi.ts'
import type { WebhookUseCases } from '../app/coreApi.ts'

/**
 * Everything the HTTP app (and MCP) needs, built by the caller (main.ts, or a test with its own
 * database): `core`, and what the middleware in front of it needs before any use case runs.
 */
export type AppDeps = {
  /** The use cases (src/app/core.ts): routes parse, call one, and shape its answer. */
  core: Core
  /** `trustProxy` (client IPs) and `rateLimit` (per IP, per key, failed auths) for the middleware; the sign-in domain and the session cookie's settings for the auth routes. */
  config: Pick<Config, 'trustProxy' | 'rateLimit' | 'siweDomain' | 'port' | 'cookieSecure' | 'sessionTtlSeconds'>
  /** The error envelope's and the rate limiter's log. */
  logger: Logger
  /** The counters of the rate limits (Redis when configured, else in memory). */
  rateLimitStore: RateLimitStore
  /** The account's webhook endpoints and their deliveries (src/app/webhookUseCases.ts). */
  webhooks: WebhookUseCases
}
