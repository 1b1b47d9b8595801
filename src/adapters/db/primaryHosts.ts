import pg from 'pg'

/** One Postgres server of a DATABASE_URL. */
export type DbHost = { host: string; port: number }

/**
 * A DATABASE_URL, which may name several servers, libpq's way:
 * `postgres://user:pass@h1:5432,h2:5433/app?target_session_attrs=read-write`. With several, the
 * service connects only to the one that accepts writes (whatever `target_session_attrs` says: the
 * service writes on every connection).
 */
export type DbTarget = {
  /** The URL as given. */
  url: string
  hosts: DbHost[]
  user: string | undefined
  password: string | undefined
  database: string | undefined
  /** The query string less `target_session_attrs` (which node-postgres does not know). */
  params: URLSearchParams
  /** Several hosts: each connection checks that its server accepts writes. */
  checkWritable: boolean
}

const URL_RE = /^(postgres(?:ql)?):\/\/(?:([^@/]*)@)?([^/?#]*)(\/[^?#]*)?(\?[^#]*)?$/

/**
 * Parses a DATABASE_URL with one or several `host:port` (node-postgres and `new URL` take one).
 *
 * @example
 * parseDatabaseUrl('postgres://u@a:1,b:2/app').hosts // [{ host: 'a', port: 1 }, { host: 'b', port: 2 }]
 */
export function parseDatabaseUrl(url: string): DbTarget {
  const m = URL_RE.exec(url.trim())
  if (!m) throw new Error('not a postgres:// URL')
  const [, , auth, hostList = '', path = '', query = ''] = m
  // No host at all (`postgres://user@/app?host=/run/postgresql`): node-postgres's defaults decide.
  const hosts = hostList === '' ? [{ host: 'localhost', port: 5432 }] : hostList.split(',').map(parseHost)
  if (hosts.some((h) => h.host === '')) throw new Error('a host is missing')
  const [user, password] = auth === undefined ? [] : splitOnce(auth, ':')
  const params = new URLSearchParams(query.slice(1))
  const attrs = params.get('target_session_attrs')
  params.delete('target_session_attrs')
  if (attrs !== null && !['any', 'read-write', 'primary'].includes(attrs)) throw new Error(`target_session_attrs=${attrs}: the service writes; use read-write`)
  const database = path.length > 1 ? decodeURIComponent(path.slice(1)) : undefined
  return { url, hosts, user: user && decodeURIComponent(user), password: password && decodeURIComponent(password), database, params, checkWritable: hosts.length > 1 }
}

function parseHost(s: string): DbHost {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(s)
  if (v6) return { host: v6[1]!, port: v6[2] ? Number(v6[2]) : 5432 }
  const [host = '', port] = splitOnce(s, ':')
  if (port !== undefined && !/^\d+$/.test(port)) throw new Error(`bad port in ${s}`)
  return { host: decodeURIComponent(host), port: port ? Number(port) : 5432 }
}

function splitOnce(s: string, sep: string): [string, string | undefined] {
  const i = s.indexOf(sep)
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)]
}

/** The same URL naming only `host` (for what takes one host: MikroORM's `clientUrl`, `psql`). */
export function singleHostUrl(target: DbTarget, { host, port }: DbHost): string {
  const auth = target.user === undefined ? '' : `${encodeURIComponent(target.user)}${target.password === undefined ? '' : `:${encodeURIComponent(target.password)}`}@`
  const q = target.params.toString()
  return `postgres://${auth}${host.includes(':') ? `[${host}]` : host}:${port}/${encodeURIComponent(target.database ?? '')}${q ? `?${q}` : ''}`
}

/** How long one connection attempt to one host may take: a host that does not answer is a lost host. */
export const CONNECT_TIMEOUT_MS = 5_000

/**
 * Finds the host that accepts writes and remembers it: the first host of the list whose server is
 * not a standby and not read-only. Concurrent callers share one search; `forget` (after an error
 * that says the server went away or is read-only) makes the next caller search again.
 *
 * @example
 * const finder = createPrimaryFinder(parseDatabaseUrl(url))
 * const { host, port } = await finder.primary()
 */
export function createPrimaryFinder(target: DbTarget, { connectTimeoutMs = CONNECT_TIMEOUT_MS }: { connectTimeoutMs?: number } = {}) {
  let known: DbHost | undefined
  let searching: Promise<DbHost> | undefined

  async function search(): Promise<DbHost> {
    const found = await Promise.all(target.hosts.map((h) => acceptsWrites(clientConfig(target, h, connectTimeoutMs))))
    const i = found.indexOf('writable')
    if (i < 0) throw new NoPrimaryError(target.hosts, found)
    return target.hosts[i]!
  }

  return {
    /** The host to connect to (with one host, that one, unchecked). Rejects with NoPrimaryError when none accepts writes. */
    async primary(): Promise<DbHost> {
      if (!target.checkWritable) return target.hosts[0]!
      if (known) return known
      searching ??= search().then(
        (h) => ((known = h), (searching = undefined), h),
        (err: unknown) => {
          searching = undefined
          throw err
        },
      )
      return searching
    },
    /** `host` went away or refused a write: search again on the next connection. */
    forget(host: DbHost): void {
      if (known && known.host === host.host && known.port === host.port) known = undefined
    },
  }
}
export type PrimaryFinder = ReturnType<typeof createPrimaryFinder>

/** No host of the list accepts writes (all down, or all standbys while one is being promoted). */
export class NoPrimaryError extends Error {
  readonly code = 'ENOPRIMARY'
  constructor(hosts: DbHost[], found: string[]) {
    super(`No database host accepts writes (${hosts.map((h, i) => `${h.host}:${h.port}: ${found[i]}`).join(', ')})`)
  }
}

/** pg's configuration for one host of the target (for a probe, the node bus's connection). */
export function clientConfig(target: DbTarget, { host, port }: DbHost, connectTimeoutMs = CONNECT_TIMEOUT_MS): pg.ClientConfig {
  // One host: the URL as node-postgres reads it (its query parameters, `host=/socket/dir`, included).
  if (!target.checkWritable) return { connectionString: target.url, connectionTimeoutMillis: connectTimeoutMs, keepAlive: true, keepAliveInitialDelayMillis: 10_000 }
  return {
    host,
    port,
    user: target.user,
    password: target.password,
    database: target.database,
    connectionTimeoutMillis: connectTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...(target.params.get('sslmode') === 'require' ? { ssl: { rejectUnauthorized: false } } : {}),
  }
}

/** Whether the server at `config` accepts writes (reachable, not in recovery, not read-only): `writable`, else why not. */
async function acceptsWrites(config: pg.ClientConfig): Promise<string> {
  const c = new pg.Client(config)
  c.on('error', () => {})
  try {
    await c.connect()
    return (await isWritable(c)) ? 'writable' : 'read-only'
  } catch (err) {
    return err instanceof Error ? err.message : String(err)
  } finally {
    await c.end().catch(() => {})
  }
}

/** libpq's read-write check: not a standby, and `transaction_read_only` off. */
async function isWritable(c: pg.Client): Promise<boolean> {
  const { rows } = await c.query<{ recovery: boolean; ro: string }>("select pg_is_in_recovery() as recovery, current_setting('transaction_read_only') as ro")
  return rows[0]?.recovery === false && rows[0]?.ro === 'off'
}

/** SQLSTATEs and socket errors that say the server is gone, going, or no longer the primary. */
const GONE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '25006', '53300', '08000', '08001', '08003', '08004', '08006', '08P01'])
const GONE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ENOPRIMARY'])
const GONE_MESSAGES = /ECONNREFUSED|ECONNRESET|Connection terminated|not queryable|timeout expired|timeout exceeded when trying to connect|Client was closed|Connection ended unexpectedly/i

/**
 * Whether `err` (anywhere in its `cause` chain; MikroORM wraps the driver's error) says the
 * database could not be reached, went away, or is read-only (a demoted primary): the request may
 * be retried once a primary answers. Any other database error keeps its own meaning.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, sqlState, errno, message } = e as { code?: unknown; sqlState?: unknown; errno?: unknown; message?: unknown }
    if (typeof code === 'string' && (GONE_SQLSTATES.has(code) || GONE_ERRNOS.has(code))) return true
    if (typeof sqlState === 'string' && GONE_SQLSTATES.has(sqlState)) return true
    if (typeof errno === 'string' && GONE_ERRNOS.has(errno)) return true
    if (typeof message === 'string' && GONE_MESSAGES.test(message) && !('severity' in e)) return true
    if (e instanceof AggregateError && e.errors.some(isDatabaseUnavailable)) return true
  }
  return false
}

/**
 * A pg Client class for the pool (pg-pool's `Client` option) that connects to the finder's
 * primary, checks, with several hosts, that the server it reached accepts writes, and leaves the
 * pool (and makes the finder search again) after an error that says its server went away or was
 * demoted: the pool's next connection goes to the new primary, with no restart of the node.
 */
export function primaryClientClass(finder: PrimaryFinder, target: DbTarget, connectTimeoutMs = CONNECT_TIMEOUT_MS): typeof pg.Client {
  return class PrimaryClient extends pg.Client {
    #at: DbHost | undefined

    constructor(config?: pg.ClientConfig) {
      // pg-pool hands its options with `password` not enumerable (kept out of stack traces): a
      // spread drops it, so it is copied by name.
      const password = config && 'password' in config ? { password: config.password } : {}
      super({ ...config, ...password, connectionTimeoutMillis: connectTimeoutMs, keepAlive: true, keepAliveInitialDelayMillis: 10_000 })
      // Every query's failure is looked at (pg's query() has many forms: only promises are watched).
      const query = (pg.Client.prototype.query as (...a: unknown[]) => unknown).bind(this)
      Object.assign(this, {
        query: (...args: unknown[]) => {
          const result = query(...args)
          if (result instanceof Promise) result.catch((err: unknown) => this.#failed(err))
          return result
        },
      })
    }

    // pg-pool calls connect(callback); other callers await connect().
    override connect(): Promise<pg.Client>
    override connect(callback: (err: Error | null, c?: pg.Client) => void): void
    override connect(callback?: (err: Error | null, c?: pg.Client) => void): Promise<pg.Client> | void {
      const done = this.#connect().then(() => this as pg.Client)
      if (!callback) return done
      done.then((c) => callback(null, c), (err: Error) => callback(err))
    }

    async #connect(): Promise<void> {
      const at = await finder.primary()
      this.#at = at
      if (target.checkWritable) {
        const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } }
        self.host = self.connectionParameters.host = at.host
        self.port = self.connectionParameters.port = at.port
      }
      try {
        await super.connect()
        if (target.checkWritable && !(await isWritable(this))) {
          await this.end().catch(() => {})
          throw Object.assign(new Error(`${at.host}:${at.port} does not accept writes (a standby, or a primary being demoted)`), { code: '25006' })
        }
      } catch (err) {
        finder.forget(at)
        throw err
      }
      this.on('error', (err) => this.#failed(err))
    }

    #failed(err: unknown): void {
      if (!this.#at || !isDatabaseUnavailable(err)) return
      finder.forget(this.#at)
      // A read-only refusal leaves the connection up: end it, so the pool drops it on release.
      if ((err as { code?: string }).code === '25006') void this.end().catch(() => {})
    }
  }
}

/**
 * A client of its own to the host of `url` that accepts writes (one host: that one), not yet
 * connected: for a connection outside the pool (the data directory's lock).
 *
 * @example
 * const c = primaryClient(url); await c.connect()
 */
export function primaryClient(url: string): pg.Client {
  const target = parseDatabaseUrl(url)
  const Client = primaryClientClass(createPrimaryFinder(target), target)
  return new Client(clientConfig(target, target.hosts[0]!))
}
