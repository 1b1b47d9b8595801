import { MikroORM } from '@mikro-orm/postgresql'
import { Migrator } from '@mikro-orm/migrations'
import type pg from 'pg'
import type { Logger } from '../../logger.ts'
import { AccountSchema } from '../../domain/accounts/account.entity.ts'
import { ApiKeySchema } from '../../domain/accounts/apiKey.entity.ts'
import { SessionSchema } from '../../domain/accounts/session.entity.ts'
import { AgentSchema, AgentWhitelistSchema } from '../../domain/agents/agent.entity.ts'
import { CustomSkillSchema } from '../../domain/skills/customSkill.entity.ts'
import { CreditEntrySchema } from '../../domain/billing/creditEntry.entity.ts'
import { ListingBidSchema, ListingSchema } from '../../domain/marketplace/listing.entity.ts'
import { migrations } from './migrations/index.ts'
import { migrateRuntimeSchema } from '../../actors/runtime/index.ts'
import { clientConfig, createPrimaryFinder, parseDatabaseUrl, primaryClientClass, singleHostUrl } from './primaryHosts.ts'

export const entities = [AccountSchema, ApiKeySchema, SessionSchema, AgentSchema, AgentWhitelistSchema, CreditEntrySchema, CustomSkillSchema, ListingSchema, ListingBidSchema]

export type Database = {
  orm: MikroORM
  /** The pg pool behind MikroORM's connection, for the actor runtime's hot path. */
  pool: pg.Pool
  /** A connection of its own (the node bus's), not yet connected: to the host that accepts writes, like the pool's. */
  newClient(): pg.Client
  close(): Promise<void>
}

/** The advisory lock that serialises migrations across processes (any fixed number would do). */
const MIGRATION_LOCK_KEY = 7_307_072

/**
 * Connects MikroORM to `url`, runs the runtime's schema migrations then the service's, and
 * exposes the native pool.
 *
 * @example
 * const db = await openDatabase({ url, poolSize: 20, logger })
 */
export async function openDatabase({
  url,
  poolSize,
  logger,
  migrate = true,
  idleInTransactionMs = 0,
}: {
  url: string
  poolSize: number
  logger: Logger
  migrate?: boolean
  /**
   * Postgres ends a session left idle inside a transaction this long (0: never): a node frozen
   * (paused, partitioned) while it holds a row lock, a wallet's nonce row say, must not block
   * the nodes that took over its work. Its transaction rolls back and its late commit fails.
   */
  idleInTransactionMs?: number
}): Promise<Database> {
  // The URL may name several hosts (a replicated pair): every connection of the pool goes to the
  // one that accepts writes, and follows it when another is promoted (src/adapters/db/primaryHosts.ts).
  const target = parseDatabaseUrl(url)
  const primary = createPrimaryFinder(target)
  const PrimaryClient = primaryClientClass(primary, target)
  const orm = await MikroORM.init({
    // MikroORM reads one host from its URL: the first (the pool's Client picks the writable one).
    clientUrl: target.checkWritable ? singleHostUrl(target, target.hosts[0]!) : url,
    entities,
    extensions: [Migrator],
    pool: { min: 0, max: poolSize },
    driverOptions: {
      Client: PrimaryClient,
      ...(idleInTransactionMs > 0 ? { idle_in_transaction_session_timeout: idleInTransactionMs } : {}),
    },
    migrations: { migrationsList: migrations, silent: true, snapshot: false, transactional: true, allOrNothing: true },
    debug: false,
    allowGlobalContext: false,
    ensureDatabase: false,
  })
  const pool = (await orm.em.getConnection().getNativeClient()) as pg.Pool
  if (migrate) {
    // The runtime's schema first: the service's migrations refer to its tables (triggers on
    // `actor`, indexes on an actor's context). Each set takes its own advisory lock.
    const runtime = await migrateRuntimeSchema(pool)
    if (runtime.length > 0) logger.info({ migrations: runtime }, 'runtime schema migrations applied')
    // Nodes that start together migrate one after the other: the next finds nothing left to do.
    const lock = await pool.connect()
    try {
      await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY])
      const executed = await orm.migrator.up()
      if (executed.length > 0) logger.info({ migrations: executed.map((m) => m.name) }, 'migrations applied')
    } finally {
      await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {})
      lock.release()
    }
  }
  return { orm, pool, newClient: () => new PrimaryClient(clientConfig(target, target.hosts[0]!)), close: () => orm.close(true) }
}
