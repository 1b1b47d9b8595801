import type { ClientPathsWithMethod, Client, MethodResponse } from 'openapi-fetch'
import type { paths } from './openapi.gen.ts'

type GetPath = ClientPathsWithMethod<Client<paths>, 'get'>
/** The lists paged by `cursor` (the GET operations whose query takes one). */
export type PagedPath = { [P in GetPath]: paths[P]['get'] extends { parameters: { query?: { cursor?: unknown } } } ? P : never }[GetPath]
type Query<P extends PagedPath> = NonNullable<paths[P]['get']['parameters']['query']>
type Page<P extends PagedPath> = MethodResponse<Client<paths>, 'get', P>
type ArrayItem<T> = { [K in keyof T]: T[K] extends readonly (infer I)[] ? I : never }[keyof T]
/** An item of a paged list: the element type of the page's one array (unknown where the document has no schema). */
export type Item<P extends PagedPath> = unknown extends Page<P> ? unknown : ArrayItem<Page<P>>

export type PaginateOptions<P extends PagedPath> = {
  /** Path parameters (`{ id }` for `/agents/{id}/audit`). */
  path?: Record<string, string>
  /** The query besides `cursor`: filters and `limit` (the page size). */
  query?: Omit<Query<P>, 'cursor'>
  signal?: AbortSignal
}

type Get = (path: never, init?: never) => Promise<unknown>

/**
 * Every item of a cursor-paged list, page after page (`nextCursor` until null), as an async
 * iterator. A page's items are its one array field (`agents`, `entries`, `deliveries`, …).
 *
 * @example
 * for await (const agent of alts.paginate('/agents', { query: { limit: '100' } })) console.log(agent.name)
 */
export function pager(get: Get) {
  return async function* paginate<P extends PagedPath>(path: P, opts: PaginateOptions<P> = {}): AsyncGenerator<Item<P>, void> {
    let cursor: string | undefined
    do {
      const query = { ...opts.query, ...(cursor ? { cursor } : {}) }
      const page = (await get(path as never, { params: { path: opts.path, query }, ...(opts.signal ? { signal: opts.signal } : {}) } as never)) as Record<string, unknown>
      const lists = Object.keys(page).filter((k) => Array.isArray(page[k]))
      if (lists.length !== 1) throw new TypeError(`${path}: a page holds ${lists.length} arrays (${lists.join(', ')}), not one`)
      yield* page[lists[0]!] as Item<P>[]
      cursor = typeof page.nextCursor === 'string' ? page.nextCursor : undefined
    } while (cursor)
  }
}
