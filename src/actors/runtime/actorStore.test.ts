import { describe, expect, it } from 'vitest'
import { commitTransitionWith } from './actorStore.ts'

/** A database that records what it is sent and answers one committed version. */
function recorder() {
  const sent: string[] = []
  const db = { query: async (q: { text: string }) => (sent.push(q.text), { rows: [{ version: 2 }] }) }
  return { db: db as never, sent }
}

describe("a transition's commit with writes", () => {
  // Postgres runs the data-modifying WITH branches the query does not read after it, the last
  // declared first: declared before the transition's own branches, the writes run last, so a row
  // a write locks (an account's, in a charge) is held for the end of the statement only.
  it("declares the writes' branches before the transition's own, so they run last", async () => {
    const { db, sent } = recorder()
    const write = { name: 'probe', with: [{ as: 'probe_u', sql: 'update account set updated_at = now() where id = $1' }], values: ['a'] }
    const params = { id: 'x', expectedVersion: 1, snapshot: {}, status: 's', stateValue: 's', timers: {}, event: {}, inboxSeq: null, effects: [], timerDeletes: [], timerUpserts: [] }
    expect(await commitTransitionWith(db, params, [write])).toBe(2)
    const text = sent[0]!
    const at = (s: string) => text.indexOf(s)
    expect(at('probe_u as (update account set updated_at = now() where id = $2)')).toBeGreaterThan(at('with input as ('))
    for (const own of ['fl as (', 'upd as (', 'j as (', 'ef as (', 'fe as (', 'nt as (']) expect(at('probe_u as (')).toBeLessThan(at(own))
  })
})
