import { primaryClient } from './primaryHosts.ts'
import type { Logger } from '../../logger.ts'
import { ServiceError } from '../../domain/errors.ts'

/** The advisory lock key every service process takes on its database (any fixed number would do). */
const NODE_LOCK_KEY = 7_307_071

/** Another service process owns this data directory's embedded Postgres or chain. */
export class DatabaseInUseError extends ServiceError {
  constructor() {
    super(
      'Another service process runs the embedded Postgres or chain of this data directory. ' +
        'To run more nodes, start with WORKERS=N, or start each further node with DATABASE_URL, CHAIN_RPC_URL ' +
        'and DEPLOYMENT_MANIFEST pointing at the shared ones (see docs/operations.md, "Several nodes").',
      { code: 'database_in_use', status: 503 },
    )
  }
}

export type NodeLock = { release(): Promise<void> }

/**
 * Takes the data directory's lock: a session advisory lock held on a connection of its own for
 * as long as the process runs. Only a process that runs an embedded Postgres or chain takes it,
 * so a second one on the same data directory refuses to start instead of stopping them under
 * the first; nodes sharing a database and a chain take none. A lock held by a process that was just killed
 * is released by Postgres when it notices the dead connection, so a short wait lets a restart
 * in; past it, the lock is someone else's. Throws DatabaseInUseError.
 */
export async function acquireNodeLock(url: string, logger: Logger, { waitMs = 1000 } = {}): Promise<NodeLock> {
  const client = primaryClient(url)
  await client.connect()
  client.on('error', (err) => logger.error({ err: err.message }, 'the data directory lock connection failed; the lock is lost'))
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
 * Whether a live process holds the data directory's lock on this database, still after `waitMs` (a process
 * killed a moment ago loses it then). False when the database cannot be reached.
 */
export async function nodeLockHeld(url: string, { waitMs = 1000 } = {}): Promise<boolean> {
  const client = primaryClient(url)
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
