import type pg from 'pg'

/** How often each node records the database's size (one sample a minute is kept, whichever node wrote it first). */
const SAMPLE_EVERY_MS = 60_000

/**
 * Records the database's size for the current minute (the first node to write it wins) and
 * forgets samples older than two days, in one statement: what the operator overview's growth of
 * the last hour is read from.
 *
 * @example
 * await sampleDatabaseSize(pool)
 */
export async function sampleDatabaseSize(pool: Pick<pg.Pool, 'query'>): Promise<void> {
  await pool.query({
    name: 'ops.database_size.sample',
    text: `with old as (delete from database_size_sample where at < now() - interval '2 days')
           insert into database_size_sample (at, bytes) values (date_trunc('minute', now()), pg_database_size(current_database()))
           on conflict (at) do nothing`,
  })
}

/**
 * Samples the database's size now and every minute until stopped (a failed sample is logged and
 * the next one tried).
 *
 * @example
 * const sampler = startDatabaseSizeSampler(pool, logger)
 * sampler.stop()
 */
export function startDatabaseSizeSampler(pool: pg.Pool, logger: { warn(obj: object, msg: string): void }, everyMs = SAMPLE_EVERY_MS) {
  const sample = () => void sampleDatabaseSize(pool).catch((err: unknown) => logger.warn({ err }, 'database size not sampled'))
  sample()
  const timer = setInterval(sample, everyMs)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
