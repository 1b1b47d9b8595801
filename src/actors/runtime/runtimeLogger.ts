/** A log call: fields, then a message (pino's shape: the service hands its pino logger in). */
type LogFn = (fields: object, message?: string) => void

/** What the runtime logs through: the four levels it uses. */
export type Logger = { debug: LogFn; info: LogFn; warn: LogFn; error: LogFn }
