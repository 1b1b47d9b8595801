import { describe, expect, it } from 'vitest'
import { actorRowsSql, nodeGoneSql, nodeLiveSql, tellMatching } from './sqlApi.ts'

/** A database that records what it is sent and answers `rowCount` rows touched. */
function recorder(rowCount = 0) {
  const sent: Array<{ text: string; values: unknown[] }> = []
  const db = { query: async (text: string, values: unknown[] = []) => (sent.push({ text: text.replace(/\s+/g, ' ').trim(), values }), { rows: [], rowCount }) }
  return { db, sent }
}

// The app composes these fragments into its own statements (src/adapters/db): their forms are
// what keeps those statements' plans, so they are pinned here. The indexes on `actor`
// (Migration20261123210000_runs, Migration20261126190000_run_automation,
// Migration20261128020000_mirror) match `snapshot->'context'->>'<key>'` and kinds as literals.
describe('the runtime\'s SQL API', () => {
  it('publishes the actor rows as a derived table Postgres pulls up: the context is the indexed expression\'s own prefix, a kind a literal', () => {
    expect(actorRowsSql()).toBe("(select id, kind, account_id, status, snapshot->'context' as context, created_at, updated_at, version from actor)")
    expect(actorRowsSql({ kind: 'automation' })).toBe(
      "(select id, kind, account_id, status, snapshot->'context' as context, created_at, updated_at, version from actor where kind = 'automation')",
    )
  })

  it('refuses a kind that is not a plain name (it is inlined as a literal)', () => {
    expect(() => actorRowsSql({ kind: "run' or true --" })).toThrow(/Not a kind or state name/)
  })

  it('says a node is gone when it was retired or its heartbeat ran out, and live otherwise, over the caller\'s id expression', () => {
    expect(nodeGoneSql('k.holder_node')).toBe('exists (select 1 from service_node n where n.id = k.holder_node and (n.stopped_at is not null or n.expires_at <= now()))')
    expect(nodeLiveSql('$1')).toBe('exists (select 1 from service_node n where n.id = $1 and n.stopped_at is null and n.expires_at > now())')
  })

  it('tells every matching actor in one statement: its context key inlined, states as literals, deduplicated by prefix and actor id', async () => {
    const { db, sent } = recorder(3)
    const told = await tellMatching(db, {
      kind: 'automation', named: { key: 'agentId', value: 'a1' }, statusNotIn: ['completed', 'cancelled'], event: { type: 'automation.cancel' }, dedupePrefix: 'market:l1',
    })
    expect(told).toBe(3)
    expect(sent).toHaveLength(1)
    expect(sent[0]!.text).toBe(
      "insert into actor_inbox (actor_id, account_id, event, dedupe_key) select id, account_id, $2::jsonb, $3 || ':' || id from actor" +
        " where kind = 'automation' and snapshot->'context'->>'agentId' = $1 and status not in ('completed', 'cancelled') on conflict (dedupe_key) do nothing",
    )
    expect(sent[0]!.values).toEqual(['a1', '{"type":"automation.cancel"}', 'market:l1'])
  })

  it('refuses a context key or state that is not a plain name, and an empty list of states, sending nothing', async () => {
    const { db, sent } = recorder()
    const base = { kind: 'automation', event: { type: 'x' }, dedupePrefix: 'p' }
    await expect(tellMatching(db, { ...base, named: { key: "a'->>'b", value: 'a' }, statusNotIn: ['completed'] })).rejects.toThrow(/Not a context key/)
    await expect(tellMatching(db, { ...base, named: { key: 'agentId', value: 'a' }, statusNotIn: ["x' or true --"] })).rejects.toThrow(/Not a kind or state name/)
    await expect(tellMatching(db, { ...base, named: { key: 'agentId', value: 'a' }, statusNotIn: [] })).rejects.toThrow(/empty list/)
    expect(sent).toEqual([])
  })
})
