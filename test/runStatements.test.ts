import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { waitFor } from './support/waitFor.ts'
import { watchAllStatements } from './support/statementCounter.ts'
import { preparedName } from '../src/actors/runtime/sql.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'

/**
 * The statements a scheduled run costs, counted over a window of runs of one agent on a 2 s
 * interval (the model answering at once), everything the service sent included. The pollers'
 * statements (due timers, inboxes, effects, webhook deliveries, the node's heartbeat) are counted
 * apart: under load one of each serves every actor due at once (docs/benchmarks.md, "What a
 * scheduled run sends").
 */
const POLLERS = [
  'actor.claim_timers', 'actor.next_timer', 'effect.claim.due', 'shard.heartbeat',
  'select distinct actor_id from actor_inbox', // the runtime's scan for inboxes written elsewhere
  'select seq, id, account_id, type, resource_kind', // events not fanned out yet
  'with cand as', // webhook deliveries due
  'select case when min(next_attempt_at)', // the next delivery's time
  // The webhook dispatcher's poll: the events' data read (the runs among them in one read) and
  // fanned out in one statement, for every event the poll found.
  "select status, snapshot->'context' as ctx",
  'account_event.fan_out',
  'credits.fold.due', // the credits' fold, once a second on every node (not a run's own)
]
/** A scheduled run's own statements, in order: see docs/benchmarks.md. */
const RUN_PATH = [
  'actor.commit', // the agent takes its timer's event: a schedule check (an effect)
  'agent.schedule_facts.run', // the check's one read
  // The check's outcome on the agent, with the run it started, its goal and its first model
  // call's worst case held (the call then holds nothing itself).
  // (its name past Postgres's 63 bytes: sent shortened, with a hash of the whole)
  preparedName('actor.commit+actor.insert+chat.message.insert+credits.reserve.write'),
  'actor.commit+chat.message.insert+credits.settle.write', // the model's answer, the run ends
]
const counter = watchAllStatements()
let app: TestApp
let api: Api
let model: ModelServer

const endedRuns = async () =>
  (await app.services.db.pool.query<{ n: number }>(`select count(*)::int as n from actor where kind = 'run' and status = 'completed'`)).rows[0]!.n

beforeAll(async () => {
  model = await startModelServer()
  model.mock.onMessage('', { content: 'Nothing to do.', usage: { prompt_tokens: 200, completion_tokens: 3 } })
  // Polls only when a timer is due (a commit's timer wakes the poller): each poll is the run's.
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', RUN_MIN_INTERVAL_SECONDS: '1' }, { runtimePollMs: 600_000 })
  ;({ api } = await app.account())
}, 60_000)
afterAll(async () => {
  await app?.close()
  await model?.stop()
  counter.restore()
})

describe('statements per scheduled run', () => {
  it('a run costs at most 4 of its own: no inbox read for its timer nor for its end, one read for its check, the run and its first call\'s hold created in the check\'s commit', async () => {
    const agent = await api('POST', '/agents', { name: 'scheduled', model: 'gpt-4o-mini', skills: [], run_interval_seconds: 2 })
    expect(agent.status).toBe(201)
    expect((await api('POST', `/agents/${agent.body.id}/start`)).status).toBe(200)
    await waitFor(async () => (await endedRuns()) >= 1, 20_000)
    const before = await endedRuns()
    counter.start()
    await waitFor(async () => (await endedRuns()) >= before + 4, 30_000)
    const sent = counter.stop().filter((s) => !s.startsWith('select count(*)::int as n from actor where kind'))
    const runs = (await endedRuns()) - before
    const own = sent.filter((s) => !POLLERS.some((p) => s.startsWith(p)))
    const count = (name: string) => own.filter((s) => s === name).length
    // The timer's event is applied as its claim answered it, and a run that was not asked to
    // does not tell its agent of its end: the agent's inbox is never read, nor marked.
    expect(count('actor.inbox.pending')).toBe(0)
    expect(own.filter((s) => s.startsWith('update actor_inbox set processed_at')).length).toBe(0)
    // One read for the schedule check: the agent, its last scheduled run's time, whether a run is
    // in progress and the balance together, which the run's start then uses as they are.
    expect(count('agent.schedule_facts.run')).toBe(runs)
    expect(own.filter((s) => s === 'agent.owned' || s.startsWith('select max(created_at)') || s.startsWith('select credits, credits_reserved')).length).toBe(0)
    // The run is created in the statement that records the check's outcome on the agent (no
    // insert of its own, no transaction), and its outcome is one statement.
    expect(count(preparedName('actor.commit+actor.insert+chat.message.insert+credits.reserve.write'))).toBe(runs)
    expect(own.filter((s) => s.startsWith('actor.insert') || s === 'begin' || s === 'credits.reserve').length).toBe(0)
    expect(count('actor.commit+chat.message.insert+credits.settle.write')).toBe(runs)
    // The run's path: 4 a run. Anything else in the window is work that is not a run's (a lease
    // renewal, a retention sweep, a commit that lost a race and went the long way once): a few
    // in the window, never one a run.
    const path = own.filter((s) => RUN_PATH.includes(s))
    expect(path.length / runs, JSON.stringify(path)).toBeLessThanOrEqual(4)
    const other = own.filter((s) => !path.includes(s))
    expect(other.length, JSON.stringify(other)).toBeLessThan(runs)
  }, 90_000)
})
