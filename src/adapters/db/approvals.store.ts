import type pg from 'pg'

/** A wallet operation or launch actor that carries an approval: its id, kind, status and machine context. */
export type ApprovalRow = { id: string; kind: string; account_id: string; status: string; context: Record<string, unknown> }

/**
 * The approvals of an account: its wallet operation and launch actors whose context carries
 * one (Migration20261128030000_launch_approvals indexes them), newest request first, then by id;
 * `after` is the `[requestedAt, id]` a page ended on (keyset paging). `pending` ones are those
 * still `awaiting_approval`.
 *
 * @example
 * await listApprovalRows(pool, accountId, { status: 'pending', limit: 50 })
 */
export async function listApprovalRows(
  pool: Pick<pg.Pool, 'query'>,
  accountId: string,
  { status, agentId, limit, after }: { status?: string | undefined; agentId?: string | undefined; limit: number; after?: [string, string] | undefined },
): Promise<ApprovalRow[]> {
  const { rows } = await pool.query<ApprovalRow>(
    `select id, kind, account_id, status, snapshot->'context' as context from actor
      where account_id = $1 and kind in ('walletop', 'launch') and jsonb_typeof(snapshot #> '{context,approval}') = 'object'
        and ($2::text is null or snapshot #>> '{context,approval,status}' = $2)
        and ($3::text is null or snapshot #>> '{context,agentId}' = $3)
        and ($5::text is null or (snapshot #>> '{context,approval,requestedAt}') < $5
             or ((snapshot #>> '{context,approval,requestedAt}') = $5 and id > $6))
      order by (snapshot #>> '{context,approval,requestedAt}') desc, id limit $4`,
    [accountId, status ?? null, agentId ?? null, limit, after?.[0] ?? null, after?.[1] ?? null],
  )
  return rows
}
