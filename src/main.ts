import { enableCompileCache } from 'node:module'

/**
 * The entry (`npm start`, and each node process of `WORKERS=N`). It turns on Node's compile cache
 * first, then boots (src/boot.ts): a process loads some 600 TypeScript files of its own and the
 * packages', and with the cache a restart reads each one's type-stripped text and compiled code
 * from disk instead of stripping and compiling it again (the cache is keyed by the file's
 * contents, so an edited file is compiled afresh). It is kept in the system's temporary
 * directory, or in NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off. A directory
 * that cannot be written leaves the cache off, nothing else.
 *
 * With an OTEL_* variable set (src/config.ts), OpenTelemetry's SDK starts next (src/tracing.ts),
 * before boot imports http, koa and pg, which its instrumentations patch as they load. With none
 * set, the SDK is never loaded. A configuration that does not parse is left for boot to report.
 */
enableCompileCache()
const { loadConfig } = await import('./config.ts')
let tracing: ReturnType<typeof loadConfig>['tracing']
try {
  tracing = loadConfig().tracing
} catch {}
if (tracing) {
  const stop = await (await import('./tracing.ts')).startTracing(tracing)
  process.once('beforeExit', () => void stop())
}
await import('./boot.ts')
