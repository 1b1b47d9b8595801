import { ConnectionError, retryAfterMs } from './errors.ts'

/** The retry policy's knobs (docs/api.md, Idempotency-Key: Retrying). */
export type RetryOptions = {
  /**
   * How long one call keeps retrying, in milliseconds (default 65 s: a key held in flight by a
   * live node is released within 60 s, and a dead node's within the failover time).
   */
  budgetMs?: number
  /** The wait between connection retries after the first, which is immediate (default 1000 ms). */
  connectionRetryMs?: number
}

/**
 * Sends a request as docs/api.md's retry policy says, to one of the service's nodes:
 * - no answer (refused, reset, cut): retried for a keyed request (`Idempotency-Key`, which is
 *   reused as is) and for a read (GET, HEAD), at once and then every `connectionRetryMs`, each
 *   time on the next node; any other request without an answer is a `ConnectionError` at once
 *   (read the resource before sending it again);
 * - 409 `idempotency_key_in_progress`, 429, and 503 with `Retry-After`: retried after
 *   `Retry-After` (nothing was started, or the first request is still running);
 * - any other answer is returned as it is.
 */
export type Transport = {
  send(request: Request): Promise<Response>
  /** The base URL calls go to now: the first given, then the next one after a connection error. */
  base(): string
  /** Moves the next calls to the next node (a stream cut off by its node). */
  rotate(): void
  readonly retry: Required<RetryOptions>
}

export function createTransport(bases: readonly string[], fetchImpl: typeof fetch, retry: RetryOptions = {}): Transport {
  if (bases.length === 0) throw new TypeError('baseUrl: at least one URL')
  const policy = { budgetMs: retry.budgetMs ?? 65_000, connectionRetryMs: retry.connectionRetryMs ?? 1000 }
  let current = 0
  const rebase = (url: string) => {
    const from = bases.find((b) => url.startsWith(b))
    return from === undefined ? url : bases[current] + url.slice(from.length)
  }
  const rotate = () => void (current = (current + 1) % bases.length)

  async function send(request: Request): Promise<Response> {
    const keyed = request.headers.has('idempotency-key')
    const read = request.method === 'GET' || request.method === 'HEAD'
    const body = request.body ? await request.arrayBuffer() : undefined
    const deadline = Date.now() + policy.budgetMs
    for (let attempt = 1; ; attempt++) {
      const url = rebase(request.url)
      let res: Response
      try {
        res = await fetchImpl(new Request(url, { method: request.method, headers: request.headers, body, signal: request.signal, redirect: request.redirect }))
      } catch (error) {
        if (request.signal.aborted) throw error
        rotate()
        if (!keyed && !read) {
          throw new ConnectionError(`No answer from ${url}; not retried: a ${request.method} without Idempotency-Key may have been done (read the resource before sending it again)`, attempt, error)
        }
        const wait = attempt === 1 ? 0 : policy.connectionRetryMs
        if (Date.now() + wait > deadline) throw new ConnectionError(`No answer from the service after ${attempt} attempts (last: ${url})`, attempt, error)
        await sleep(wait, request.signal)
        continue
      }
      const wait = await retryWait(res)
      if (wait === undefined || Date.now() + wait > deadline) return res
      await res.body?.cancel()
      await sleep(wait, request.signal)
    }
  }
  return { send, base: () => bases[current]!, rotate, retry: policy }
}

/** How long to wait before sending again, or undefined when the answer is final. */
async function retryWait(res: Response): Promise<number | undefined> {
  const after = retryAfterMs(res.headers)
  if (res.status === 429) return after ?? 1000
  if (res.status === 503) return after
  if (res.status !== 409) return undefined
  const body = (await res.clone().json().catch(() => undefined)) as { code?: unknown } | undefined
  return body?.code === 'idempotency_key_in_progress' ? (after ?? 1000) : undefined
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve()
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort)
      resolve()
    }, ms)
    const abort = () => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    signal?.addEventListener('abort', abort, { once: true })
  })
}
