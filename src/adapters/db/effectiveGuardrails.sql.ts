/**
 * The agent's guardrails as they apply now, in SQL: the stored policy and payout wallet with the
 * pending changes whose hold has passed by the database clock laid over them. Every read that
 * checks a policy or pays the payout wallet selects these, so a matured change applies without a
 * timer, and the next update folds it into the row for good.
 *
 * @example
 * pool.query(`select ${effectivePolicySql('a')} as policy from agent a where a.id = $1`, [agentId])
 */
export function effectivePolicySql(alias: string): string {
  return `(${alias}.policy || coalesce((select jsonb_object_agg(p.field, p.value) from agent_pending_change p
    where p.agent_id = ${alias}.id and p.field <> 'payout_wallet' and p.effective_at <= now()), '{}'::jsonb))`
}

/** The payout wallet as it applies now (see `effectivePolicySql`). */
export function effectivePayoutSql(alias: string): string {
  return `coalesce((select p.value #>> '{}' from agent_pending_change p
    where p.agent_id = ${alias}.id and p.field = 'payout_wallet' and p.effective_at <= now()), ${alias}.payout_wallet)`
}

/** The changes still waiting for their hold, soonest first, as `[{ field, value, effective_at }]`. */
export function pendingChangesSql(alias: string): string {
  return `(select coalesce(jsonb_agg(jsonb_build_object('field', p.field, 'value', p.value, 'effective_at', p.effective_at)
    order by p.effective_at, p.field), '[]'::jsonb) from agent_pending_change p where p.agent_id = ${alias}.id and p.effective_at > now())`
}
