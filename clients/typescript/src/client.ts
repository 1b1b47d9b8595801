import createFetchClient, { type Client, type ClientPathsWithMethod, type FetchResponse, type MaybeOptionalInit, type Middleware } from 'openapi-fetch'
import { apiErrorOf } from './errors.ts'
import { followers } from './follow.ts'
import { KEYED_OPERATIONS } from './keyed.ts'
import type { ClientPaths, JsonObject, Resource, ResourceOperation } from './paths.ts'
import { pager } from './paging.ts'
import { createTransport, type RetryOptions, type Transport } from './transport.ts'

export type ClientOptions = {
  /**
   * The service's base URL (`http://127.0.0.1:3000`, without `/api/v1`), or the URLs of several
   * of its nodes: a call that gets no answer is retried on the next one.
   */
  baseUrl: string | readonly string[]
  /** A `cpk_` API key, sent as `Authorization: Bearer`. */
  apiKey?: string
  /** Headers sent with every request. */
  headers?: Record<string, string>
  retry?: RetryOptions
  /** The fetch to send with (default: the global one). */
  fetch?: typeof fetch
}

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete'
type Raw = Client<ClientPaths>
type PathsOf<M extends Method> = ClientPathsWithMethod<Raw, M>
type RequiredKeysOf<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T]
type InitParam<I> = RequiredKeysOf<I> extends never ? [(I & { [key: string]: unknown })?] : [I & { [key: string]: unknown }]
/** The 2xx body of an operation as the document types it (a `Resource` or a `JsonObject` where it gives no schema). */
export type Answer<M extends Method, P extends PathsOf<M>, I> =
  FetchResponse<ClientPaths[P][M] & Record<string | number, any>, I, `${string}/${string}`>['data'] extends infer D
    ? unknown extends D ? (`${M} ${P & string}` extends ResourceOperation ? Resource : JsonObject) : NonNullable<D>
    : never
/** A call of one method: the answer's body on 2xx (typed by the OpenAPI document), a typed `ApiError` otherwise. */
export type Call<M extends Method> = <P extends PathsOf<M>, I extends MaybeOptionalInit<ClientPaths[P], M>>(
  path: P,
  ...init: InitParam<I>
) => Promise<Answer<M, P, I>>

/** Operations served outside /api/v1 (their `servers` in the document). */
function prefixOf(path: string): string {
  if (path === '/metrics') return ''
  if (path.startsWith('/mcp/')) return '/api'
  return '/api/v1'
}

/**
 * The typed client of the Agent Launch and Trading Service: `GET`, `POST`, `PUT`, `PATCH`, `DELETE`
 * answer the body or throw a typed `ApiError`, with docs/api.md's retry policy underneath;
 * `paginate` walks a cursor-paged list; `follow` and `end` follow a launch, swap, run, chat
 * turn or automation over Server-Sent Events; `raw` is the underlying openapi-fetch client.
 *
 * @example
 * const alts = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.KEY })
 * const swap = await alts.POST('/swap/execute', { body: { agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01' } })
 * const final = await alts.end(alts.follow.swap(swap.id))
 */
export function createClient(options: ClientOptions) {
  const bases = (typeof options.baseUrl === 'string' ? [options.baseUrl] : options.baseUrl).map((b) => b.replace(/\/+$/, ''))
  const transport: Transport = createTransport(bases, options.fetch ?? globalThis.fetch, options.retry)
  const raw: Raw = createFetchClient<ClientPaths>({
    baseUrl: `${bases[0]}/api/v1`,
    fetch: (request) => transport.send(request),
    headers: { ...options.headers, ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
  })
  raw.use(idempotencyKeys)

  const call = <M extends Method>(method: M): Call<M> =>
    (async (path: string, init?: Record<string, unknown>) => {
      const { data, error, response } = await raw.request(method, path as never, { baseUrl: `${bases[0]}${prefixOf(path)}`, ...init } as never)
      if (!response.ok) throw apiErrorOf(response.status, error, response.headers)
      return data as unknown
    }) as Call<M>
  const GET = call('get')
  const { follow, end } = followers(raw, transport)
  return {
    GET, POST: call('post'), PUT: call('put'), PATCH: call('patch'), DELETE: call('delete'),
    paginate: pager(GET),
    follow,
    end,
    raw,
    transport,
  }
}

export type AltsClient = ReturnType<typeof createClient>

/** A fresh `Idempotency-Key` for each call of a keyed operation the caller sent none with; retries reuse it (they resend this request). */
const idempotencyKeys: Middleware = {
  onRequest({ request, schemaPath }) {
    if (KEYED_OPERATIONS.has(`${request.method} ${schemaPath}`) && !request.headers.has('idempotency-key')) {
      request.headers.set('idempotency-key', crypto.randomUUID())
    }
    return request
  },
}
