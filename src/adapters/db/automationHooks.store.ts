import type pg from 'pg'

/** A hook's current token hash and secret, and the previous pair while its rotation's grace period lasts (else nulls). */
export type AutomationHookRow = {
  automation_id: string
  account_id: string
  token_sha256: string
  secret: string
  prev_token_sha256: string | null
  prev_secret: string | null
}

/**
 * The signal webhooks of automations (`automation_hook`): one per automation with a `webhook`
 * trigger. Issuing again (a creation retried after a crash before its answer) replaces both.
 *
 * @example
 * const hooks = createAutomationHooksStore(pool)
 * await hooks.issue({ automationId, accountId, tokenSha256, secret })
 */
export function createAutomationHooksStore(pool: Pick<pg.Pool, 'query'>) {
  return {
    async issue(p: { automationId: string; accountId: string; tokenSha256: string; secret: string }): Promise<void> {
      await pool.query(
        `insert into automation_hook (automation_id, account_id, token_sha256, secret) values ($1, $2, $3, $4)
         on conflict (automation_id) do update set token_sha256 = excluded.token_sha256, secret = excluded.secret, created_at = now()
           where automation_hook.account_id = excluded.account_id`,
        [p.automationId, p.accountId, p.tokenSha256, p.secret],
      )
    },
    async get(automationId: string): Promise<AutomationHookRow | undefined> {
      const { rows } = await pool.query<AutomationHookRow>(
        `select automation_id, account_id, token_sha256, secret,
                case when prev_valid_until > now() then prev_token_sha256 end as prev_token_sha256,
                case when prev_valid_until > now() then prev_secret end as prev_secret
           from automation_hook where automation_id = $1`,
        [automationId],
      )
      return rows[0]
    },
    /**
     * Replaces the account's hook's token and secret; the pair replaced stays valid for
     * `graceSeconds` (0: not at all; a pair still in an earlier rotation's grace is dropped).
     * Answers when the previous pair stops being valid, or undefined when there is no such hook.
     */
    async rotate(p: { automationId: string; accountId: string; tokenSha256: string; secret: string; graceSeconds: number }): Promise<{ prevValidUntil: Date | string } | undefined> {
      const { rows } = await pool.query<{ prev_valid_until: Date | string }>(
        `update automation_hook set prev_token_sha256 = token_sha256, prev_secret = secret,
                prev_valid_until = now() + make_interval(secs => $5), token_sha256 = $3, secret = $4
          where automation_id = $1 and account_id = $2 returning prev_valid_until`,
        [p.automationId, p.accountId, p.tokenSha256, p.secret, p.graceSeconds],
      )
      return rows[0] ? { prevValidUntil: rows[0].prev_valid_until } : undefined
    },
  }
}
