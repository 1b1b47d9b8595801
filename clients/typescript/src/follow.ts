import type { Client } from 'openapi-fetch'
import { apiErrorOf, ConnectionError } from './errors.ts'
import type { ClientPaths, Resource } from './paths.ts'
import { parseSse } from './sse.ts'
import { sleep, type Transport } from './transport.ts'

/** One state of a followed resource: `id` is the journal sequence to resume after (`Last-Event-ID`). */
export type StatusEvent = { id: string | undefined; status: string; data: Resource }
export type FollowOptions = {
  /** Resume after this event (an id a former follow yielded). */
  lastEventId?: string
  signal?: AbortSignal
  /** A stream silent this long is given up and resumed elsewhere (default 45 s: three keep-alives). */
  idleMs?: number
}

type Kind = { events: string; read: string; final: ReadonlySet<string> }
const KINDS = {
  launch: { events: '/launch/{id}/events', read: '/launch/{id}', final: new Set(['live', 'failed']) },
  swap: { events: '/swap/{id}/events', read: '/swap/{id}', final: new Set(['confirmed', 'failed']) },
  run: { events: '/runs/{id}/events', read: '/runs/{id}', final: new Set(['completed', 'stopped', 'failed', 'budget_exhausted']) },
  chatTurn: { events: '/agents/{id}/chat/{turnId}/events', read: '/agents/{id}/chat/{turnId}', final: new Set(['completed', 'failed']) },
  automation: { events: '/automations/{id}/events', read: '/automations/{id}', final: new Set(['completed', 'cancelled']) },
} satisfies Record<string, Kind>

/**
 * Follows a launch, swap, run, chat turn or automation over its Server-Sent Events until a
 * final status, and returns the final resource. A stream that ends or is cut before that (its
 * node died or restarted) is resumed with `Last-Event-ID` on the next node, after a read of the
 * resource (which may have ended meanwhile); no state is yielded twice.
 */
export function followers(raw: Client<ClientPaths>, transport: Transport) {
  async function* follow(kind: Kind, path: Record<string, string>, opts: FollowOptions = {}): AsyncGenerator<StatusEvent, Resource> {
    let last = opts.lastEventId
    const deadline = () => Date.now() + transport.retry.budgetMs
    let giveUpAt = deadline()
    for (let attempt = 0; ; attempt++) {
      const idle = new AbortController()
      const signal = opts.signal ? AbortSignal.any([opts.signal, idle.signal]) : idle.signal
      const { data, error, response } = await raw.GET(kind.events as '/swap/{id}/events', {
        params: { path: path as { id: string } }, parseAs: 'stream', signal,
        headers: { accept: 'text/event-stream', ...(last ? { 'last-event-id': last } : {}) },
      })
      if (!response.ok || !data) throw apiErrorOf(response.status, error, response.headers)
      try {
        for await (const e of parseSse(data, { idleMs: opts.idleMs ?? 45_000, onIdle: () => idle.abort() })) {
          if (e.id !== undefined) last = e.id
          if (e.event !== 'status') continue
          const resource = JSON.parse(e.data) as Resource
          giveUpAt = deadline()
          yield { id: e.id, status: resource.status, data: resource }
          if (kind.final.has(resource.status)) return resource
        }
      } catch (cut) {
        if (opts.signal?.aborted) throw cut
      }
      // Ended without a final state: cut off, or resumed after the final event. Read it, then resume.
      transport.rotate()
      const now = await read(kind, path, opts.signal)
      if (kind.final.has(now.status)) return now
      if (Date.now() > giveUpAt) throw new ConnectionError(`The ${kind.events} stream kept ending before a final state`, attempt + 1, undefined)
      await sleep(attempt === 0 ? 0 : transport.retry.connectionRetryMs, opts.signal)
    }
  }

  async function read(kind: Kind, path: Record<string, string>, signal: AbortSignal | undefined): Promise<Resource> {
    const { data, error, response } = await raw.GET(kind.read as '/swap/{id}', { params: { path: path as { id: string } }, ...(signal ? { signal } : {}) })
    if (!response.ok) throw apiErrorOf(response.status, error, response.headers)
    return data as Resource
  }

  const of = (kind: Kind) => (path: Record<string, string>, opts?: FollowOptions) => follow(kind, path, opts)
  const follows = {
    launch: (id: string, opts?: FollowOptions) => of(KINDS.launch)({ id }, opts),
    swap: (id: string, opts?: FollowOptions) => of(KINDS.swap)({ id }, opts),
    run: (id: string, opts?: FollowOptions) => of(KINDS.run)({ id }, opts),
    chatTurn: (agentId: string, turnId: string, opts?: FollowOptions) => of(KINDS.chatTurn)({ id: agentId, turnId }, opts),
    automation: (id: string, opts?: FollowOptions) => of(KINDS.automation)({ id }, opts),
  }
  /** The final resource of a follow, its states read and dropped. */
  const end = async (events: AsyncGenerator<StatusEvent, Resource>): Promise<Resource> => {
    for (;;) {
      const next = await events.next()
      if (next.done) return next.value
    }
  }
  return { follow: follows, end }
}
