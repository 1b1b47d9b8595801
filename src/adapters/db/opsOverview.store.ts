import type pg from 'pg'
import type { ServiceFigures } from '../../domain/ops/ports.ts'

/**
 * The operator overview's figures that are the service's (the runtime's counts are
 * `runtime.inspect.counts`), in one statement. Each part reads an index or a small table:
 * `chain_tx_created`, `credit_entry_model_usage`, `account_credits_reserved` (less what `credit_stripe` holds unused), `chain_checkpoint`
 * (docs/benchmarks.md, "Operator overview").
 *
 * @example
 * const figures = await serviceFigures(pool)
 */
export async function serviceFigures(pool: pg.Pool): Promise<ServiceFigures> {
  const { rows } = await pool.query<Record<string, unknown>>({
    name: 'ops.overview.service',
    text: `select
      (select json_build_object('lastMinute', (count(*) filter (where created_at > now() - interval '1 minute'))::int, 'lastHour', count(*)::int)
         from chain_tx where created_at > now() - interval '1 hour') as transactions,
      (select coalesce(sum(abs(credits)), 0)::bigint from credit_entry where kind = 'model_usage' and created_at > now() - interval '1 hour') as model_credits,
      ((select coalesce(sum(credits_reserved), 0) from account where credits_reserved > 0)
        - (select coalesce(sum(escrow - held), 0) from credit_stripe where escrow > held))::bigint as credits_reserved,
      (select block_number from chain_checkpoint order by chain_id limit 1) as indexed_block`,
  })
  const r = rows[0]!
  return {
    transactions: r.transactions as ServiceFigures['transactions'],
    modelCreditsLastHour: Number(r.model_credits),
    creditsReserved: Number(r.credits_reserved),
    indexedBlock: r.indexed_block === null || r.indexed_block === undefined ? null : Number(r.indexed_block),
  }
}
