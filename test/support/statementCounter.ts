import { AsyncLocalStorage } from 'node:async_hooks'
import { createRequire } from 'node:module'
import type { RequestListener } from 'node:http'
import pg from 'pg'

type QueryFn = (this: unknown, config: unknown, ...rest: unknown[]) => unknown

/**
 * Counts the statements sent to Postgres on behalf of one tagged piece of work: an HTTP request
 * and everything it set going (its commit, the effects run after it), but not what timers and
 * pollers started elsewhere send meanwhile. Every copy of the `pg` driver is watched (the app's
 * and MikroORM's own), at `Client#query`, where pools send everything.
 *
 * @example
 * const counter = watchStatements()
 * const app = await startTestApp({}, { wrapRequests: counter.wrap })
 * counter.tag('start') // the next request is counted as 'start'
 */
export function watchStatements() {
  const context = new AsyncLocalStorage<string>()
  const seen = new Map<string, string[]>()
  const restore = onEveryQuery((config) => {
    const tag = context.getStore()
    if (tag !== undefined) seen.get(tag)?.push(describe(config))
  })
  let next: string | undefined
  return {
    /** The next request served is counted under `tag`. */
    tag(tag: string) {
      seen.set(tag, [])
      next = tag
    },
    /** A request listener that runs each request under the tag set last (once). */
    wrap(listener: RequestListener): RequestListener {
      return (req, res) => {
        const tag = next
        next = undefined
        if (tag === undefined) return listener(req, res)
        context.run(tag, () => listener(req, res))
      }
    },
    /** The statements sent so far for `tag` (each a prepared statement's name or its first words). */
    statements: (tag: string): string[] => [...(seen.get(tag) ?? [])],
    restore,
  }
}

function describe(config: unknown): string {
  if (typeof config === 'string') return config.replace(/\s+/g, ' ').trim().slice(0, 80)
  const c = config as { name?: string; text?: string }
  return c.name ?? (c.text ?? '').replace(/\s+/g, ' ').trim().slice(0, 80)
}

/**
 * Records every statement sent through `pg` (every copy of the driver) while `on`, whatever sent
 * it: a scheduled run is started by a timer, not a request, so its statements are counted over a
 * window rather than by context.
 */
export function watchAllStatements() {
  const seen: string[] = []
  let on = false
  const restore = onEveryQuery((config) => {
    if (on) seen.push(describe(config))
  })
  return {
    start: () => {
      seen.length = 0
      on = true
    },
    /** Stops recording; answers what was sent since `start`. */
    stop: (): string[] => {
      on = false
      return [...seen]
    },
    restore,
  }
}

/**
 * Calls `record` with every statement any `pg` client sends (the app's copy of pg and
 * MikroORM's, when they differ), before sending it; answers the function that undoes it.
 */
function onEveryQuery(record: (config: unknown) => void): () => void {
  const restores: Array<() => void> = []
  const copies = new Set([pg, createRequire(import.meta.resolve('@mikro-orm/postgresql'))('pg') as typeof pg])
  for (const copy of copies) {
    const proto = copy.Client.prototype as unknown as { query: QueryFn }
    const original = proto.query
    proto.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
      record(config)
      return original.call(this, config, ...rest)
    }
    restores.push(() => {
      proto.query = original
    })
  }
  return () => restores.forEach((r) => r())
}
