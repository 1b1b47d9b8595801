import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'
import type { RateLimitStore } from './rateLimit.ts'
import type { Core } from '../core.ts'

/**
 * Everything the HTTP app (and MCP) needs, built by the caller (main.ts, or a test with its own
 * database): `core`, and what the middleware in front of it needs before any use case runs.
 */
export type AppDeps = {
  /** The use cases (src/core.ts): routes parse, call one, and shape its answer. */
  core: Core
  /** Read by the middleware: `trustProxy` (client IPs), `rateLimit` (per IP, per key, failed auths); and the session cookie's settings (auth routes). */
  config: Config
  /** The error envelope's and the rate limiter's log. */
  logger: Logger
  /** The counters of the rate limits (Redis when configured, else in memory). */
  rateLimitStore: RateLimitStore
}
