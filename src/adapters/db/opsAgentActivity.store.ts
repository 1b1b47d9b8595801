import type pg from 'pg'

/**
 * What an agent's operations hold beside their actors (the console's list of them,
 * src/domain/ops/agentOperations.ts): each wallet operation's or launch's record (`wallet_op`).
 */

/** The USD value and the recorded parent (the chat turn, run or automation that started it) of each operation, by id. */
export async function walletOpFacts(pool: pg.Pool, ids: string[]): Promise<Map<string, { usdValue: string | null; parentId: string | null }>> {
  const { rows } = await pool.query<{ id: string; usd: string | null; parent_id: string | null }>(
    'select id, usd_value::text as usd, parent_id from wallet_op where id = any($1::text[])',
    [ids],
  )
  return new Map(rows.map((r) => [r.id, { usdValue: r.usd, parentId: r.parent_id }]))
}
