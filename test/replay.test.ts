import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import type { ActorKind } from '../src/actors/runtime/actorKind.ts'
import { journalEvents } from '../src/actors/runtime/actorJournal.store.ts'
import { replayJournal } from '../src/actors/runtime/replay.ts'
import { agentKind } from '../src/actors/agent/agent.machine.ts'
import { automationKind } from '../src/actors/automation/automation.machine.ts'
import { chatTurnKind } from '../src/actors/chatTurn/chatTurn.machine.ts'
import { launchKind } from '../src/actors/launch/launch.machine.ts'
import { runKind } from '../src/actors/run/run.machine.ts'
import { walletOpKind } from '../src/actors/walletOp/walletOp.machine.ts'
import { apiClient, waitForLaunchEnd, type Api } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { startModelServer } from './support/modelServer.ts'
import { answerAt, chatTurnEnds, swapCall } from './support/scriptedChat.ts'
import { adminCreateAccount, serverCleanup, startServer, stopServer } from './support/server.ts'
import { waitFor } from './support/waitFor.ts'

/**
 * Replay (DESIGN §6, the property Temporal checks with its replay tests): after real scenarios
 * through the service (a DCA whose first firing is cut by a kill -9, a chat turn whose model
 * makes two swaps, an autonomous run, a token launch, a market sale), every actor's journal,
 * folded through its machine from the initial snapshot with the runtime's own pure transition
 * (`replayJournal`), gives the snapshot the runtime stored, for every actor of every kind.
 */
const KINDS: ActorKind[] = [agentKind, automationKind, chatTurnKind, launchKind, runKind, walletOpKind]
const { servers, cleanups } = serverCleanup()

type ActorRow = { id: string; kind: string; version: string; status: string; state_value: unknown; snapshot: unknown; machine_version: number }

async function newAgent(api: Api, name: string, { eth = '2', start = false } = {}): Promise<string> {
  const agent = (await api('POST', '/agents', { name, skills: ['trading', 'wallet'] })).body as { id: string }
  expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth, usdc: '100' })).status).toBe(200)
  if (start) expect((await api('POST', `/agents/${agent.id}/start`)).status).toBe(200)
  return agent.id
}

describe('replay', () => {
  it('no machine takes an event of xstate\'s internal names (a stored timer of such a name is renamed by the runtime)', () => {
    for (const k of KINDS) expect(k.machine.events.filter((e) => e.startsWith('xstate.')), k.kind).toEqual([])
  })

  it('no machine reads a clock or randomness (a kind\'s parseEvent may stamp the time an event is taken in: it is journaled)', () => {
    const files = readdirSync('src/actors', { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.machine.ts'))
    expect(files).toHaveLength(KINDS.length)
    for (const f of files) {
      const machine = readFileSync(join('src/actors', f), 'utf8').replace(/\n {2}parseEvent\([\s\S]*?\n {2}\},/g, '')
      expect(machine.match(/Date\.now\(|new Date\(\)|Math\.random|performance\.now|randomUUID|process\./g), f).toBeNull()
    }
  })

  it('every actor journal, folded through its machine from the initial snapshot, gives the stored snapshot', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), 'alts-replay-'))
    const db = new pg.Pool({ connectionString: database.url, max: 2 })
    const model = await startModelServer()
    cleanups.push(async () => {
      await db.end()
      await model.stop()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
    })
    const env = {
      DATABASE_URL: database.url, DATA_DIR: dataDir, AUTOMATION_MIN_INTERVAL_SECONDS: '1', STARTER_CREDITS: '10000',
      OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key',
    }

    // 1. A DCA (three runs, every 2 s) whose first swap's broadcast kills the service (kill -9).
    let server = await startServer({ ...env, FAULT_INJECT: 'after_broadcast' })
    servers.push(server)
    const [{ apiKey }, { apiKey: buyerKey }] = await Promise.all([adminCreateAccount(env), adminCreateAccount(env, ['--name', 'buyer'])])
    let api = apiClient(`${server.url}/api/v1`, apiKey)
    const dcaAgent = await newAgent(api, 'dca', { start: true })
    const exited = new Promise<void>((resolve) => server.child.once('exit', () => resolve()))
    await api('POST', '/automations', {
      agent_id: dcaAgent, name: 'dca', kind: 'dca', dca: { tokenIn: 'ETH', tokenOut: 'USDC', amountPerRun: '0.001', everySeconds: 2, maxRuns: 3 },
    }).catch(() => undefined)
    await exited
    expect(server.child.signalCode).toBe('SIGKILL')

    server = await startServer(env)
    servers.push(server)
    api = apiClient(`${server.url}/api/v1`, apiKey)
    const [{ id: automationId }] = (await db.query(`select id from actor where kind = 'automation'`)).rows

    // 2. A chat turn whose model makes two swaps, one per round.
    const trader = await newAgent(api, 'trader')
    const text = 'replay: two swaps'
    answerAt(model, text, 0, { toolCalls: [swapCall('call_0', '0.01')] })
    answerAt(model, text, 1, { toolCalls: [swapCall('call_1', '0.02')] })
    answerAt(model, text, 2, { content: 'Bought twice.' })
    const chat = chatTurnEnds(api, trader, await api('POST', `/agents/${trader}/chat`, { message: text }))

    // 3. An autonomous run: a look at the portfolio, a swap, then an answer.
    const goal = 'replay: look, swap and report'
    model.mock.on({ userMessage: goal, hasToolResult: false }, { toolCalls: [{ id: 'call_look', name: 'get_portfolio', arguments: '{}' }] })
    model.mock.onToolResult('call_look', { toolCalls: [swapCall('call_swap', '0.01')] })
    model.mock.onToolResult('call_swap', { content: 'Swapped.' })
    const runner = await newAgent(api, 'runner')
    const started = await api('POST', `/agents/${runner}/runs`, { goal, maxSteps: 3 })
    expect(started.status, JSON.stringify(started.body)).toBe(202)

    // 4. A token launch.
    const launcher = await newAgent(api, 'launcher')
    const launch = await api('POST', '/launch/venue-a', { agentId: launcher, symbol: 'RPLY', name: 'Replay', quote: 'ETH' }, { 'idempotency-key': randomUUID() })
    expect(launch.status, JSON.stringify(launch.body)).toBe(202)

    // 5. A market sale: listed by this account (the agent paused), bought by another.
    const sold = (await api('POST', '/agents', { name: 'for sale', skills: ['trading'] })).body.id as string
    const listing = await api('POST', '/market', { agentId: sold, priceCredits: 100 })
    expect(listing.status, JSON.stringify(listing.body)).toBe(201)
    const buyer = apiClient(`${server.url}/api/v1`, buyerKey)
    expect((await buyer('POST', `/market/${listing.body.id}/buy`)).status).toBe(200)
    expect((await buyer('POST', `/agents/${sold}/start`)).status).toBe(200)

    expect(await chat).toMatchObject({ status: 'completed', content: 'Bought twice.' })
    let run: { status: string } = { status: 'running' }
    await waitFor(async () => ['completed', 'failed', 'stopped', 'budget_exhausted'].includes((run = (await api('GET', `/runs/${started.body.id}`)).body).status), 30_000)
    expect(run.status).toBe('completed')
    expect((await api('DELETE', `/agents/${runner}`)).status).toBe(200)
    expect(await waitForLaunchEnd(api, launch.body.id)).toMatchObject({ status: 'live' })
    let automation: { status: string; runCount: number } = { status: 'armed', runCount: 0 }
    await waitFor(async () => (automation = (await api('GET', `/automations/${automationId}`)).body).status === 'completed', 60_000)
    expect(automation.runCount).toBe(3)
    await stopServer(server)

    // The database at rest: every actor, replayed from its journal.
    const { rows: actors } = await db.query<ActorRow>('select id, kind, version, status, state_value, snapshot, machine_version from actor order by kind, id')
    const replayed: Record<string, number> = {}
    for (const a of actors) {
      const kind = KINDS.find((k) => k.kind === a.kind)
      expect(kind, `an actor of kind ${a.kind}`).toBeDefined()
      expect(a.machine_version).toBe(kind!.machineVersion)
      const journal = await journalEvents(db, a.id)
      // Nothing missing: one entry per committed version, from the creation on.
      expect(journal.map((j) => j.seq)).toEqual(journal.map((_, i) => i + 1))
      expect(journal).toHaveLength(Number(a.version))
      const { persisted, status, snapshot, effects, foldedFrom } = replayJournal(kind!, journal.map((j) => j.event), a.id)
      // Written by this build's machines alone: no migration, so the fold covers the whole journal.
      expect(foldedFrom).toBe(1)
      const what = `${a.kind} ${a.id} (${journal.map((j) => j.event.type).join(', ')})`
      expect(persisted, what).toEqual(a.snapshot)
      expect(status, what).toBe(a.status)
      expect(snapshot.value, what).toEqual(a.state_value)
      // The actions replay too: the same effects, under the same ids, with the same parameters.
      const { rows: stored } = await db.query('select id, kind, params from effect where actor_id = $1', [a.id])
      const byId = (x: { id: string }, y: { id: string }) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)
      expect(JSON.parse(JSON.stringify(effects)).sort(byId), what).toEqual(stored.sort(byId))
      replayed[a.kind] = (replayed[a.kind] ?? 0) + 1
    }
    console.log('actors replayed per kind', replayed)
    for (const k of KINDS) expect(replayed[k.kind] ?? 0, `actors of kind ${k.kind} replayed`).toBeGreaterThan(0)
  })
})
