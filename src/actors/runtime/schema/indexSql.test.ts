import { describe, expect, it } from 'vitest'
import { contextIndexSql, effectKindIndexSql } from './indexSql.ts'
import { statusHookSql } from './statusHooks.ts'

describe("the DDL the runtime writes for the app's declarations", () => {
  it('writes a context index in the form the reads use', () => {
    expect(contextIndexSql({ name: 'actor_run_agent', kind: 'run', path: ['agentId'], newestFirst: true })).toBe(
      "create index actor_run_agent on actor ((snapshot->'context'->>'agentId'), created_at desc, id desc) where kind = 'run'",
    )
    expect(contextIndexSql({ name: 'x', kind: ['walletop', 'launch'], leading: ['account_id'], path: ['approval', 'requestedAt'], form: 'brace', descending: true, where: [{ path: ['approval'], is: 'object' }] })).toBe(
      "create index x on actor (account_id, (snapshot #>> '{context,approval,requestedAt}') desc) where kind in ('walletop', 'launch') and jsonb_typeof(snapshot #> '{context,approval}') = 'object'",
    )
    expect(effectKindIndexSql({ name: 'effect_fire_created', kind: 'automation.fire' })).toBe("create index effect_fire_created on effect (created_at) where kind = 'automation.fire'")
  })

  it('refuses names that are not identifiers (the DDL is text, never input)', () => {
    expect(() => contextIndexSql({ name: 'x; drop table actor', path: ['agentId'] })).toThrow()
    expect(() => contextIndexSql({ name: 'x', path: ["a'b"] })).toThrow()
    expect(() => statusHookSql({ name: 'h', kinds: ["walletop'"], fn: 'f' })).toThrow()
    expect(() => statusHookSql({ name: 'h', kinds: [], fn: 'f' })).toThrow()
  })
})
