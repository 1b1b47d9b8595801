import { pino, type Logger } from 'pino'

export type { Logger }

/** Paths that must never reach a log line, whatever object is logged. */
const redact = [
  'privateKey', '*.privateKey', 'apiKey', '*.apiKey', 'masterKey', '*.masterKey',
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie',
  'walletKeyEncrypted', '*.walletKeyEncrypted',
]

/**
 * Builds the service logger (JSON lines on stderr, so stdout stays free for CLI output).
 *
 * @example
 * const logger = createLogger({ level: 'info' })
 */
export function createLogger({ level }: { level: string }): Logger {
  return pino({ level, redact: { paths: redact, censor: '[redacted]' } }, pino.destination(2))
}
