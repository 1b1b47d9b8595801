import { pino, type DestinationStream, type Logger } from 'pino'

export type { Logger }

/** Paths that must never reach a log line, whatever object is logged. */
const redact = [
  'privateKey', '*.privateKey', 'apiKey', '*.apiKey', 'masterKey', '*.masterKey',
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie',
  'walletKeyEncrypted', '*.walletKeyEncrypted',
]

/**
 * Builds the service logger (JSON lines on stderr, so stdout stays free for CLI output; a test may
 * hand its own `destination` to read the lines).
 *
 * @example
 * const logger = createLogger({ level: 'info' })
 */
export function createLogger({ level, destination }: { level: string; destination?: DestinationStream }): Logger {
  return pino({ level, redact: { paths: redact, censor: '[redacted]' } }, destination ?? pino.destination(2))
}
