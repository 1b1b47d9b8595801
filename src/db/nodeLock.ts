import pg from 'pg'
import type { Logger } from '../logger.ts'
import { ServiceError } from '../domain/errors.ts'

/** The advisory lock key every service process takes on its database (any fixed number would do). */
const NODE_LOCK_KEY = 7_307_071

/** Another service process already runs against this database. */
export class DatabaseInUseError extends ServiceError {
  constructor() {
    super(
      'Another service process is already running against this database (it holds the boot lock). ' +
        'Stop it first, or point DATABASE_URL / DATA_DIR at another database.',
      { code: 'database_in_use', status: 503 },
    )
  }
}

export type NodeLock = { release(): Promise<void> }

/**
 * Takes the boot lock: a session advisory lock held on a connection of its own for as long as
 * the process runs, so a second process against the same database refuses to start instead of
 * racing the first (until shard leases exist). A lock held by a process that was just killed
 * is released by Postgres when it notices the dead connection, so a short wait lets a restart
 * in; past it, the lock is someone else's. Throws DatabaseInUseError.
 */
export async function acquireNodeLock(url: string, logger: Logger, { waitMs = 1000 } = {}): Promise<NodeLock> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  client.on('error', (err) => logger.error({ err: err.message }, 'the boot lock connection failed; the lock is lost'))
  const until = Date.now() + waitMs
  for (;;) {
    const { rows } = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1) as ok', [NODE_LOCK_KEY])
    if (rows[0]?.ok) break
    if (Date.now() >= until) {
      await client.end().catch(() => {})
      throw new DatabaseInUseError()
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return { release: () => client.end().catch(() => {}) }
}

/**
 * Whether a live process holds the boot lock on this database, still after `waitMs` (a process
 * killed a moment ago loses it then). False when the database cannot be reached.
 */
export async function nodeLockHeld(url: string, { waitMs = 1000 } = {}): Promise<boolean> {
  const client = new pg.Client({ connectionString: url })
  try {
    await client.connect()
    const until = Date.now() + waitMs
    for (;;) {
      const { rows } = await client.query<{ held: boolean }>(
        `select exists (select 1 from pg_locks where locktype = 'advisory' and granted and classid = 0 and objid = $1
                         and database = (select oid from pg_database where datname = current_database())) as held`,
        [NODE_LOCK_KEY],
      )
      if (!rows[0]?.held) return false
      if (Date.now() >= until) return true
      await new Promise((r) => setTimeout(r, 100))
    }
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}
