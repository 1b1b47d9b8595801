import { describe, expect, it } from 'vitest'
import { actorsCarrying, actorsInStates, actorsOfKind, firstInStates, pageNaming, statesOf } from './read.store.ts'

/** A database that records what it is sent and answers no rows. */
function recorder() {
  const sent: Array<{ text: string; values: unknown[] }> = []
  const db = { query: async (text: string, values: unknown[] = []) => (sent.push({ text: text.replace(/\s+/g, ' ').trim(), values }), { rows: [] }) }
  return { db: db as never, sent }
}

// The indexes these reads rely on match only SQL in their own form: a context key inlined, states
// and kinds as literals (Migration20261123210000_runs, Migration20261127180000_actor_agent,
// Migration20261128030000_launch_approvals).
describe('the runtime read model\'s statements', () => {
  it('filters on a context key in the form of its expression index, and on states as literals (actor_run_one_active)', async () => {
    const { db, sent } = recorder()
    await firstInStates(db, 'run', ['queued', 'running'], { key: 'agentId', value: 'a1' })
    await pageNaming(db, { kind: 'run', named: { key: 'agentId', value: 'a1' }, accountId: 'acc', limit: 3 })
    await actorsInStates(db, { states: { walletop: ['confirmed'], launch: ['live'] }, named: { key: 'agentId', values: ['a1'] } })
    expect(sent[0]!.text).toBe("select id, account_id from actor where kind = $1 and status in ('queued', 'running') and snapshot->'context'->>'agentId' = $2 limit 1")
    expect(sent[1]!.text).toContain("where kind = $1 and snapshot->'context'->>'agentId' = $2 and account_id = $7")
    expect(sent[1]!.text).toContain('order by created_at desc, id desc limit $6')
    expect(sent[2]!.text).toContain("((kind = 'walletop' and status in ('confirmed')) or (kind = 'launch' and status in ('live'))) and snapshot->'context'->>'agentId' = any($1::text[])")
  })

  it('reads only an actor created before an effect was planned in the same statement, both times from the effect and actor rows (the database clock)', async () => {
    const { db, sent } = recorder()
    await firstInStates(db, 'run', ['queued', 'running'], { key: 'agentId', value: 'a1' }, { createdBeforeEffect: 'eff-1' })
    await firstInStates(db, 'run', ['queued', 'running'], { key: 'agentId', value: 'a1' }, { createdBeforeEffect: undefined })
    expect(sent[0]!.text).toBe(
      "select id, account_id from actor where kind = $1 and status in ('queued', 'running') and snapshot->'context'->>'agentId' = $2" +
        ' and not exists (select 1 from effect e where e.id = $3 and e.created_at <= actor.created_at) limit 1',
    )
    expect(sent[0]!.values).toEqual(['run', 'a1', 'eff-1'])
    // Without an effect: the read as before.
    expect(sent[1]).toEqual({ text: "select id, account_id from actor where kind = $1 and status in ('queued', 'running') and snapshot->'context'->>'agentId' = $2 limit 1", values: ['run', 'a1'] })
  })

  it('reads approvals in the form of actor_approval: the kinds as literals, the carried object typed, the order on its path', async () => {
    const { db, sent } = recorder()
    await actorsCarrying(db, {
      accountId: 'acc', kinds: ['walletop', 'launch'], carrying: ['approval'],
      equal: [{ path: ['approval', 'status'], value: 'pending' }, { path: ['agentId'], value: undefined }],
      orderBy: ['approval', 'requestedAt'], after: ['2026-01-01', 'x'], limit: 5,
    })
    expect(sent[0]!.text).toContain("where account_id = $1 and kind in ('walletop', 'launch') and jsonb_typeof(snapshot #> '{context,approval}') = 'object'")
    expect(sent[0]!.text).toContain("order by (snapshot #>> '{context,approval,requestedAt}') desc, id limit $4")
    expect(sent[0]!.values).toEqual(['acc', 'pending', null, 5, '2026-01-01', 'x'])
  })

  it('refuses a key, kind or state that is not a plain name, and sends nothing for no ids', async () => {
    const { db, sent } = recorder()
    await expect(firstInStates(db, 'run', ["x' or true --"], { key: 'agentId', value: 'a' })).rejects.toThrow(/Not a kind or state name/)
    await expect(pageNaming(db, { kind: 'run', named: { key: "a'->>'b", value: 'a' }, accountId: 'acc', limit: 1 })).rejects.toThrow(/Not a context key/)
    expect(await actorsOfKind(db, 'run', [])).toEqual([])
    expect((await statesOf(db, 'agent', [])).size).toBe(0)
    expect(await actorsInStates(db, { states: { walletop: ['confirmed'] }, named: { key: 'agentId', values: [] } })).toEqual([])
    expect(sent).toEqual([])
  })
})
