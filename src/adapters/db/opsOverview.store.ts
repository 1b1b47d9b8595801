import type pg from 'pg'
import type { ServiceFigures } from '../../domain/ops/ports.ts'

/**
 * The operator overview's figures that are the service's (the runtime's counts are
 * `runtime.inspect.counts`), in one statement. Each part reads an index or a small table:
 * `chain_tx_created`, `credit_entry_model_usage`, `account_credits_reserved` (less what `credit_stripe` holds unused), `chain_checkpoint`,
 * the database's size and its sample of an hour ago (`database_size_sample`)
 * (docs/benchmarks.md, "Operator overview").
 *
 * @example
 * const figures = await serviceFigures(pool)
 */
/** The database's size and its sample of an hour ago, as columns of a select (both statements below). */
const STORAGE_COLUMNS = `pg_database_size(current_database()) as database_bytes,
      (select bytes from database_size_sample where at <= now() - interval '1 hour' order by at desc limit 1) as bytes_hour_ago`

/** Those columns read: the size, and its growth since the sample of an hour ago (null until one is that old). */
const storageOf = (r: { database_bytes?: unknown; bytes_hour_ago?: unknown }) => ({
  databaseBytes: Number(r.database_bytes),
  growthLastHourBytes: r.bytes_hour_ago === null || r.bytes_hour_ago === undefined ? null : Number(r.database_bytes) - Number(r.bytes_hour_ago),
})

export async function serviceFigures(pool: pg.Pool): Promise<ServiceFigures> {
  const { rows } = await pool.query<Record<string, unknown>>({
    name: 'ops.overview.service',
    text: `select
      (select json_build_object('lastMinute', (count(*) filter (where created_at > now() - interval '1 minute'))::int, 'lastHour', count(*)::int)
         from chain_tx where created_at > now() - interval '1 hour') as transactions,
      (select coalesce(sum(abs(credits)), 0)::bigint from credit_entry where kind = 'model_usage' and created_at > now() - interval '1 hour') as model_credits,
      ((select coalesce(sum(credits_reserved), 0) from account where credits_reserved > 0)
        - (select coalesce(sum(escrow - held), 0) from credit_stripe where escrow > held))::bigint as credits_reserved,
      (select block_number from chain_checkpoint order by chain_id limit 1) as indexed_block,
      ${STORAGE_COLUMNS}`,
  })
  const r = rows[0]!
  return {
    transactions: r.transactions as ServiceFigures['transactions'],
    modelCreditsLastHour: Number(r.model_credits),
    creditsReserved: Number(r.credits_reserved),
    indexedBlock: r.indexed_block === null || r.indexed_block === undefined ? null : Number(r.indexed_block),
    ...storageOf(r),
  }
}

/**
 * The database's size and its growth since the sample of an hour ago (null until one is that
 * old): what `/metrics` exports beside the operator overview.
 */
export async function storageFigures(pool: Pick<pg.Pool, 'query'>): Promise<{ databaseBytes: number; growthLastHourBytes: number | null }> {
  const { rows } = await pool.query<{ database_bytes: string; bytes_hour_ago: string | null }>({ name: 'ops.storage', text: `select ${STORAGE_COLUMNS}` })
  return storageOf(rows[0]!)
}
