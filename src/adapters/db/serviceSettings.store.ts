import type pg from 'pg'

/**
 * Writes the settings that database triggers read (`service_setting`,
 * Migration20261128032000_credits_low_setting): each node writes its configuration as it starts,
 * so nodes meant to agree do; the last node started wins if they do not.
 *
 * @example
 * await writeServiceSettings(pool, { credits_low_threshold: 200 })
 */
export async function writeServiceSettings(pool: Pick<pg.Pool, 'query'>, settings: Record<string, unknown>): Promise<void> {
  for (const [key, value] of Object.entries(settings)) {
    await pool.query(
      `insert into service_setting (key, value) values ($1, $2::jsonb)
       on conflict (key) do update set value = excluded.value, updated_at = now() where service_setting.value is distinct from excluded.value`,
      [key, JSON.stringify(value)],
    )
  }
}
