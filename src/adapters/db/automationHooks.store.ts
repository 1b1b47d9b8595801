import type pg from 'pg'

export type AutomationHookRow = { automation_id: string; account_id: string; token_sha256: string; secret: string }

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
      const { rows } = await pool.query<AutomationHookRow>('select automation_id, account_id, token_sha256, secret from automation_hook where automation_id = $1', [automationId])
      return rows[0]
    },
  }
}
