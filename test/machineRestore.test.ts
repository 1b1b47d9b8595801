import { randomUUID } from 'node:crypto'
import { readdirSync } from 'node:fs'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { initialTransition, transition, type AnyEventObject, type AnyMachineSnapshot } from 'xstate'
import { openDatabase, type Database } from '../src/adapters/db/orm.ts'
import { createLogger } from '../src/logger.ts'
import { createActorRuntime, type ActorRuntime } from '../src/actors/runtime/actorRuntime.ts'
import type { ActorKind } from '../src/actors/runtime/actorKind.ts'
import { agentKind } from '../src/actors/agent/agent.machine.ts'
import { launchKind } from '../src/actors/launch/launch.machine.ts'
import { walletOpKind } from '../src/actors/walletOp/walletOp.machine.ts'
import { chatTurnKind } from '../src/actors/chatTurn/chatTurn.machine.ts'
import { runKind } from '../src/actors/run/run.machine.ts'
import { automationKind } from '../src/actors/automation/automation.machine.ts'
import { createTestDatabase } from './support/db.ts'
import { ALL_KINDS, quietHandlers, sendFromNewProcess } from './support/actorProcess.ts'

/**
 * Every actor kind survives a restart: an actor brought to a mid-life state by one runtime, that
 * runtime stopped, and a new Node process on the same database takes the next event exactly as a
 * runtime that never stopped does. Effects are not the subject here: every handler reports
 * nothing, and the tests drive the actors with events.
 */
const logger = createLogger({ level: 'silent' })

let url: string
let db: Database
let drop: () => Promise<void>
beforeAll(async () => {
  const t = await createTestDatabase()
  url = t.url
  drop = t.drop
  db = await openDatabase({ url, poolSize: 4, logger })
})
afterAll(async () => {
  await db?.close()
  await drop?.()
})

/** A runtime as a process builds it (here, in this process): its own pool, an empty cache, its pollers started. */
async function startRuntime(): Promise<{ runtime: ActorRuntime; stop(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: url, max: 3 })
  const runtime = createActorRuntime({ pool, kinds: ALL_KINDS, logger, effectHandlers: quietHandlers, pollMs: 50 })
  expect(runtime.cachedCount()).toBe(0)
  await runtime.start()
  return {
    runtime,
    async stop() {
      await runtime.stop()
      await pool.end()
    },
  }
}

const q = async (sql: string, id: string) => (await db.pool.query(sql, [id])).rows

/** Everything the runtime stores for an actor, with its id taken out of the effect ids. */
async function stored(id: string) {
  const [actor] = await q(
    `select kind, status, state_value, snapshot, timers, version::int as version, parent_id, stuck_reason from actor where id = $1`, id)
  return {
    actor,
    // An automation's events are journaled with the time they were taken in (`at`), which two runtimes never share.
    journal: (await q(`select seq::int as seq, event, state_value from actor_journal where actor_id = $1 order by seq`, id))
      .map(({ event: { at, ...event }, ...r }) => ({ ...r, event: actor.kind === 'automation' ? event : { ...event, ...(at ? { at } : {}) } })),
    effects: await q(`select substr(id, length(actor_id) + 1) as id, kind, params, status from effect where actor_id = $1 order by id`, id),
    timers: await q(`select timer_key, generation::text as generation, event from actor_timer where actor_id = $1 order by timer_key`, id),
    inbox: await q(`select event, processed_at is not null as processed from actor_inbox where actor_id = $1 order by seq`, id),
  }
}

const dueAt = (id: string) => q(`select timer_key, generation::text as generation, due_at from actor_timer where actor_id = $1 order by timer_key`, id)

/** The persisted snapshot an in-memory actor reaches on the same events (xstate's own reducer, nothing stored in between). */
function uninterrupted(kind: ActorKind, input: unknown, events: AnyEventObject[]): unknown {
  let [snapshot] = initialTransition(kind.machine, input) as [AnyMachineSnapshot, unknown]
  for (const e of events) [snapshot] = transition(kind.machine, snapshot, e) as [AnyMachineSnapshot, unknown]
  return JSON.parse(JSON.stringify(kind.machine.getPersistedSnapshot(snapshot)))
}

type Scenario = {
  name: string
  kind: ActorKind
  input(accountId: string): unknown
  /** Sent before the restart: the actor's mid-life. */
  before: AnyEventObject[]
  mid: unknown
  /** The one event the fresh runtime handles. */
  next: AnyEventObject
  after: unknown
  /** What the next event must have done to the context (a subset). */
  context: Record<string, unknown>
  /** Effect kinds the next event asked for (ids `:<version>:<index>`). */
  effects: Array<{ id: string; kind: string; params: unknown }>
  /** Timer keys armed before the restart, and left after the next event. */
  timersMid: string[]
  timersAfter: string[]
}

const agentInput = (accountId: string) => ({ agentId: 'agent-restore', accountId })
const chatInput = (accountId: string) => ({
  turnId: 'turn-restore', accountId, agentId: 'agent-restore', model: 'gpt-4o-mini', temperature: null, stream: false, maxRounds: 4,
  tools: ['swap_execute'], system: 'You are a test agent.', message: 'how are my funds?',
})
const runInput = (accountId: string) => ({
  runId: 'run-restore', accountId, agentId: 'agent-restore', model: 'gpt-4o-mini', temperature: null, goal: 'report the portfolio',
  tools: ['swap_execute'], system: 'You are a test agent.', trigger: 'api', maxSteps: 5, maxCredits: 1000, maxSeconds: 3600,
})
const usage = { promptTokens: 120, completionTokens: 30, totalTokens: 150 }
const answer = { type: 'model.done', effectId: 'fx', content: 'All funds are in ETH.', toolCalls: [], model: 'gpt-4o-mini', usage, credits: 7, at: '2026-11-24T10:00:00.000Z' }

const scenarios: Scenario[] = [
  {
    name: 'agent: running (its due timer armed by a schedule check), then its run interval changed',
    kind: agentKind,
    input: agentInput,
    before: [{ type: 'agent.start' }, { type: 'agent.run.skipped', effectId: 'fx', reason: 'not_due', runIntervalSeconds: 600, nextRunInMs: 600_000, dueAt: '2026-11-24T10:10:00.000Z' }],
    mid: 'running',
    next: { type: 'agent.schedule.changed' },
    after: 'running',
    context: { runIntervalSeconds: 600, dueAt: '2026-11-24T10:10:00.000Z', reason: null },
    effects: [{ id: ':4:0', kind: 'agent.runDue', params: { check: 2 } }],
    timersMid: ['agent.due'],
    timersAfter: ['agent.due'],
  },
  {
    name: 'agent: running, then paused',
    kind: agentKind,
    input: agentInput,
    before: [{ type: 'agent.start' }, { type: 'agent.run.skipped', effectId: 'fx', reason: 'not_due', runIntervalSeconds: 600, nextRunInMs: 600_000, dueAt: '2026-11-24T10:10:00.000Z' }],
    mid: 'running',
    next: { type: 'agent.pause', reason: 'owner asked' },
    after: 'paused',
    context: { reason: 'owner asked', runIntervalSeconds: 600 },
    effects: [{ id: ':4:1', kind: 'agent.stopRuns', params: {} }],
    timersMid: ['agent.due'],
    timersAfter: [],
  },
  {
    name: 'launch: simulated and submitting, then submitted',
    kind: launchKind,
    input: (accountId) => ({
      launchId: 'launch-restore', accountId, agentId: 'agent-restore', venue: 'venue-a', symbol: 'RST', name: 'Restore',
      description: null, logoUrl: null, quote: 'ETH', seedAmount: null,
    }),
    before: [{ type: 'launch.begin' }, { type: 'launch.simulated', effectId: 'fx', gas: '900000' }],
    mid: 'submitting',
    next: { type: 'launch.submitted', effectId: 'fx', txHash: '0xabc' },
    after: 'confirming',
    context: { gas: '900000', txHash: '0xabc', error: null },
    effects: [{ id: ':4:0', kind: 'launch.confirm', params: { launchId: 'launch-restore', txHash: '0xabc' } }],
    timersMid: [],
    timersAfter: [],
  },
  {
    name: 'wallet operation: submitted and confirming, then confirmed',
    kind: walletOpKind,
    input: (accountId) => ({ opId: 'op-restore', accountId, agentId: 'agent-restore', kind: 'transfer', params: { amount: '0.1', to: '0x1' } }),
    before: [{ type: 'op.submitted', effectId: 'fx', txHash: '0xdef' }],
    mid: 'confirming',
    next: { type: 'op.confirmed', effectId: 'fx', result: { blockNumber: '7' } },
    after: 'confirmed',
    context: { txHash: '0xdef', result: { blockNumber: '7' }, error: null },
    effects: [],
    timersMid: [],
    timersAfter: [],
  },
  {
    name: 'chat turn: thinking, then the model answers without tool calls',
    kind: chatTurnKind,
    input: chatInput,
    before: [],
    mid: 'thinking',
    next: answer,
    after: 'completed',
    context: { content: 'All funds are in ETH.', answeredBy: 'gpt-4o-mini', usage, credits: 7, toolCalls: [], round: 1 },
    effects: [],
    timersMid: [],
    timersAfter: [],
  },
  {
    name: 'run: thinking (its deadline armed), then the model answers without tool calls',
    kind: runKind,
    input: runInput,
    before: [],
    mid: { running: 'thinking' },
    next: answer,
    after: 'completed',
    context: { summary: 'All funds are in ETH.', credits: 7, stepsUsed: 1, exhausted: null, stop: null },
    effects: [],
    timersMid: ['run.deadline'],
    timersAfter: [],
  },
  {
    name: 'automation: armed on a price threshold, then paused',
    kind: automationKind,
    input: (accountId) => ({
      automationId: 'automation-restore', accountId, agentId: 'agent-restore', name: 'limit', description: null, kind: 'limit',
      trigger: { type: 'price_threshold', mint: 'ETH', operator: 'lte', priceUsd: '1000' },
      action: { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'USDC', tokenOut: 'ETH', amountIn: '5' } },
      triggerOnce: true, catchUp: 'once', maxFirings: null, maxSpendUsd: null, maxFailures: 3, createdAt: '2026-11-24T10:00:00.000Z',
    }),
    before: [{ type: 'automation.update', changes: { name: 'limit buy' } }],
    mid: { armed: 'listening' },
    next: { type: 'automation.pause' },
    after: 'paused',
    context: { name: 'limit buy', runCount: 0, firingNumber: 0, nextRunAt: null, suspended: false },
    effects: [],
    timersMid: [],
    timersAfter: [],
  },
]

/** Creates the actor and sends it `events` through one runtime; answers its id. */
async function drive(runtime: ActorRuntime, s: Scenario, accountId: string, events: AnyEventObject[]): Promise<string> {
  const id = `${s.kind.kind}-${randomUUID()}`
  await runtime.create(s.kind.kind, { id, accountId, input: s.input(accountId) })
  for (const e of events) await runtime.send(id, e)
  return id
}

describe('every actor kind is restored from its stored snapshot after a restart', () => {
  it('the scenarios cover every kind a machine file defines', async () => {
    const dir = new URL('../src/actors/', import.meta.url)
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.machine.ts'))
    const defined = new Set<string>()
    for (const f of files) {
      for (const value of Object.values(await import(new URL(f, dir).href))) {
        if (value && typeof value === 'object' && 'machine' in value && 'kind' in value) defined.add(String(value.kind))
      }
    }
    expect([...defined].sort()).toEqual(ALL_KINDS.map((k) => k.kind).sort())
    expect([...new Set(scenarios.map((s) => s.kind.kind))].sort()).toEqual([...defined].sort())
  })

  it.each(scenarios)('$name', async (s) => {
    const accountId = randomUUID()
    const all = [...s.before, s.next]

    // The reference: the same events on one runtime that never stops (it ends first: a run's
    // agent may have one run in progress only).
    const steady = await startRuntime()
    const reference = await drive(steady.runtime, s, accountId, all)
    await steady.stop()

    // Mid-life, then the process goes away.
    const first = await startRuntime()
    const id = await drive(first.runtime, s, accountId, s.before)
    await first.stop()
    const mid = await stored(id)
    const midDue = await dueAt(id)
    expect(midDue.map((t) => t.timer_key)).toEqual(s.timersMid)
    expect(mid.actor).toMatchObject({ status: s.kind.statusOf({ value: s.mid } as AnyMachineSnapshot), state_value: s.mid, version: 1 + s.before.length })
    expect(mid.actor.snapshot).toEqual(uninterrupted(s.kind, s.input(accountId), s.before))

    // A new process on the same database takes the next event.
    const entry = await sendFromNewProcess(url, id, s.next)
    expect([entry.cachedBefore, entry.value, entry.version]).toEqual([0, s.after, 2 + s.before.length])
    expect(entry.context).toMatchObject(s.context)

    const after = await stored(id)
    expect(after.actor.snapshot).toEqual(uninterrupted(s.kind, s.input(accountId), all))
    expect(after.journal.at(-1)).toEqual({ seq: 2 + s.before.length, event: s.next, state_value: s.after })
    if (s.kind === automationKind) expect((await q(`select event->>'at' as at from actor_journal where actor_id = $1 and seq > 1`, id)).every((r) => !Number.isNaN(Date.parse(r.at)))).toBe(true)
    expect(after.effects.filter((e) => !mid.effects.some((m) => m.id === e.id)).map(({ status: _, ...e }) => e)).toEqual(s.effects)
    // The timers are the ones stored before the restart (a load re-arms nothing), less what the event cancelled.
    expect(after.timers.map((t) => t.timer_key)).toEqual(s.timersAfter)
    expect(await dueAt(id)).toEqual(midDue.filter((t) => s.timersAfter.includes(t.timer_key)))
    // Exactly what the runtime that never stopped stored: row, journal, effects, timers, inbox.
    expect(after).toEqual(await stored(reference))
  })
})
