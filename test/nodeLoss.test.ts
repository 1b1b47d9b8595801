import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import nodeHttp from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { createPublicClient, http, type Address } from 'viem'
import { apiClient, type Api, type ApiResponse } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { adminCreateAccount, kill9, startServer, stopServer, serverCleanup, type ServerProcess } from './support/server.ts'
import { waitFor } from './support/waitFor.ts'
import { readSse, type SseEvent } from './support/sse.ts'
import { stableUuid } from '../src/domain/util/stableUuid.ts'
import { shardOf } from '../src/actors/runtime/shards.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { answerAt, swapCall } from './support/scriptedChat.ts'

/*
 * Three node processes on one database and chain (A runs the embedded chain, B and C join it;
 * a fourth, D, whose row says it runs on another host, joins for its test), shard leases of 2 s. What a client sees when a node dies
 * under it: every request it sent completes on a retry with its Idempotency-Key, within the
 * failover time and 2 s; its streams resume on another node; a node that stops drains politely.
 */
const LEASE_SECONDS = 2
const SWAPS = 20
const { servers, cleanups } = serverCleanup()
let db: pg.Pool
let nodes: ServerProcess[]
/** D: a node whose row names another host, so only its heartbeat running out tells it is gone. */
let elsewhere: ServerProcess
let startElsewhere: () => Promise<void>
let model: ModelServer
/** An agent with the trading skill for chat turns (a wallet of its own). */
let talker: { id: string }
let account: { accountId: string; apiKey: string }
let agent: { id: string; walletAddress: Address }
let rpcUrl: string

const api = (n: ServerProcess): Api => apiClient(`${n.url}/api/v1`, account.apiKey)
const swapBody = () => ({ agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001', slippageBps: 300 })
const liveNodes = async () =>
  (await db.query<{ id: string; pid: number; shards: number }>(
    `select n.id, n.pid, (select count(*)::int from shard_lease l where l.owner = n.id and l.expires_at > now()) as shards
       from service_node n where n.stopped_at is null and n.expires_at > now() and not n.leaving`,
  )).rows

type Attempt = { status: number | 'reset'; swapId?: string; at: number }

/**
 * A client's retry policy (docs/api.md): a connection reset, 409 `idempotency_key_in_progress`,
 * 429 and 503 are retried with the same key, after the answer's Retry-After (the next node that
 * is up takes it, as a load balancer would send it).
 */
async function swapWithRetries(targets: () => ServerProcess[], key: string, attempts: Attempt[]): Promise<ApiResponse> {
  for (let i = 0; ; i++) {
    const node = targets()[i % targets().length]!
    let res: ApiResponse | undefined
    try {
      res = await api(node)('POST', '/swap/execute', swapBody(), { 'idempotency-key': key })
    } catch {
      attempts.push({ status: 'reset', at: Date.now() })
      continue
    }
    attempts.push({ status: res.status, swapId: res.body?.id, at: Date.now() })
    if (![409, 429, 503].includes(res.status)) return res
    await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)))
  }
}

/** Every swap of the agent ended, each confirmed with exactly one transaction; the wallet's nonces are contiguous on chain and in the outbox. */
async function settledExactlyOnce(): Promise<{ swaps: string[]; nonce: number }> {
  await waitFor(async () => (await db.query(
    `select 1 from wallet_op o join actor a on a.id = o.id where o.agent_id = $1 and a.status not in ('confirmed', 'failed')`, [agent.id])).rowCount === 0, 30_000)
  const ops = (await db.query<{ id: string; status: string; txs: number }>(
    `select o.id, a.status, (select count(*)::int from chain_tx t join effect e on e.id = t.effect_id where e.actor_id = o.id and t.status = 'confirmed') as txs
       from wallet_op o join actor a on a.id = o.id where o.agent_id = $1 and o.kind = 'swap'`, [agent.id])).rows
  expect(ops.filter((o) => o.status !== 'confirmed' || o.txs !== 1)).toEqual([])
  const nonces = (await db.query<{ nonce: string }>(`select nonce from chain_tx where agent_id = $1 and status = 'confirmed' order by nonce`, [agent.id])).rows.map((r) => Number(r.nonce))
  expect(nonces).toEqual(nonces.map((_, i) => i))
  const nonce = await createPublicClient({ transport: http(rpcUrl) }).getTransactionCount({ address: agent.walletAddress })
  expect(nonce).toBe(nonces.length)
  return { swaps: ops.map((o) => o.id), nonce }
}

beforeAll(async () => {
  const database = await createTestDatabase()
  const dataDir = mkdtempSync(join(tmpdir(), 'alts-nodeloss-'))
  db = new pg.Pool({ connectionString: database.url, max: 2 })
  cleanups.push(async () => {
    await db.end()
    await database.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  model = await startModelServer()
  cleanups.push(() => model.stop())
  const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, SHARD_LEASE_SECONDS: String(LEASE_SECONDS), LOG_LEVEL: 'warn', OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key' }
  const a = await startServer(env)
  servers.push(a)
  rpcUrl = (JSON.parse(readFileSync(join(dataDir, 'chain', 'anvil.json'), 'utf8')) as { rpcUrl: string }).rpcUrl
  const joinEnv = { ...env, CHAIN_RPC_URL: rpcUrl.replace(/^http/, 'ws'), DEPLOYMENT_MANIFEST: join(dataDir, 'chain', 'manifest.json'), CHAIN_DEV: '1' }
  const [b, c] = await Promise.all([startServer(joinEnv), startServer(joinEnv)])
  servers.push(b, c)
  nodes = [a, b, c]
  startElsewhere = async () => {
    elsewhere = await startServer(joinEnv)
    servers.push(elsewhere)
    await waitFor(async () => (await liveNodes()).some((n) => n.pid === elsewhere.child.pid && n.shards > 0), 20_000)
    await db.query(`update service_node set host = 'elsewhere' where pid = $1`, [elsewhere.child.pid])
  }
  account = await adminCreateAccount(env)
  agent = (await api(a)('POST', '/agents', { name: 'loss', model: 'gpt-4o-mini', skills: [] })).body
  talker = (await api(a)('POST', '/agents', { name: 'talker', model: 'gpt-4o-mini', skills: ['trading'] })).body
  expect((await api(a)('POST', '/dev/faucet', { agentId: agent.id, eth: '5' })).status).toBe(200)
  expect((await api(a)('POST', '/dev/faucet', { agentId: talker.id, eth: '1' })).status).toBe(200)
  await waitFor(async () => (await liveNodes()).length === 3, 20_000)
}, 120_000)
afterAll(async () => {
  for (const n of [...(nodes ?? []), elsewhere]) if (n) await stopServer(n).catch(() => {})
})

const automine = (on: boolean) => createPublicClient({ transport: http(rpcUrl) }).request({ method: 'evm_setAutomine' as never, params: [on] as never })
const mine = () => createPublicClient({ transport: http(rpcUrl) }).request({ method: 'evm_mine' as never, params: [] as never })

/** A GET on a keep-alive agent of one socket: the status, its `Connection` header, and whether it went on the socket already open. */
function getOn(agentHttp: nodeHttp.Agent, url: string): Promise<{ status: number; connection: string | undefined; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = nodeHttp.get(url, { agent: agentHttp, headers: { authorization: `Bearer ${account.apiKey}` } }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, reused: req.reusedSocket }))
    })
    req.on('error', reject)
  })
}

describe('losing a node loses no request', () => {
  it(`kill -9 of a node with ${SWAPS} keyed swaps in flight: each completes on a retry with its key within the failover time + 2 s, once`, async () => {
    const victim = nodes[1]!
    const victimId = (await liveNodes()).find((n) => n.pid === victim.child.pid)!.id
    const nonceBefore = (await settledExactlyOnce()).nonce
    let up = [...nodes]
    const attempts: Attempt[][] = Array.from({ length: SWAPS }, () => [])
    const keys = Array.from({ length: SWAPS }, (_, i) => `loss-${i}`)
    const done = keys.map((key, i) => swapWithRetries(() => (attempts[i]!.length === 0 ? [nodes[i % 3]!] : up), key, attempts[i]!))
    // Every key is claimed and the victim holds some in flight.
    await waitFor(async () => {
      const { rows } = await db.query<{ n: number; victim: number }>(
        `select count(*)::int as n, count(*) filter (where holder_node = $2 and status = 'in_flight')::int as victim
           from idempotency_key where account_id = $1 and key like 'loss-%'`, [account.accountId, victimId])
      return rows[0]!.n === SWAPS && rows[0]!.victim > 0
    }, 20_000)
    up = nodes.filter((n) => n !== victim)
    await kill9(victim, { group: false })
    const killedAt = Date.now()
    const answers = await Promise.all(done)

    expect(answers.map((r) => [r.status, r.body.status])).toEqual(answers.map(() => [200, 'confirmed']))
    const cut = attempts.filter((a) => a[0]!.status === 'reset')
    expect(cut.length).toBeGreaterThan(0)
    const completedAfterMs = cut.map((a) => a.at(-1)!.at - killedAt)
    expect(Math.max(...completedAfterMs)).toBeLessThan(LEASE_SECONDS * 1000 + 2000)
    // The swap's id derives from the key: the same on the first answer, the retry, and in the database.
    keys.forEach((key, i) => expect(answers[i]!.body.id).toBe(stableUuid(account.accountId, 'swap/execute', key)))
    const replays = await Promise.all(keys.map((key) => api(up[0]!)('POST', '/swap/execute', swapBody(), { 'idempotency-key': key })))
    expect(replays.map((r) => [r.status, r.headers.get('idempotent-replayed'), r.body.id])).toEqual(answers.map((a) => [200, 'true', a.body.id]))
    const { swaps, nonce } = await settledExactlyOnce()
    expect(nonce - nonceBefore).toBe(SWAPS)
    expect(swaps.filter((id) => answers.some((a) => a.body.id === id))).toHaveLength(SWAPS)
    console.info(`cut off: ${cut.length}; kill to last retry answered: ${Math.max(...completedAfterMs)} ms`)
  }, 120_000)

  it('kill -9 of a node on another host: its in-flight key and its shards are taken over once its heartbeat runs out, not before', async () => {
    await startElsewhere()
    const victimId = (await liveNodes()).find((n) => n.pid === elsewhere.child.pid)!.id
    await automine(false)
    // The swap waits for its block on D: its key is held in flight by D when D dies.
    const key = 'elsewhere-swap'
    const firstAttempt = api(elsewhere)('POST', '/swap/execute', swapBody(), { 'idempotency-key': key }).catch(() => 'reset')
    await waitFor(async () => (await db.query(
      `select 1 from idempotency_key where key = $1 and holder_node = $2 and status = 'in_flight'`, [key, victimId])).rowCount === 1, 20_000)
    const shardsAtKill = (await liveNodes()).find((n) => n.id === victimId)!.shards
    await kill9(elsewhere, { group: false })
    expect(await firstAttempt).toBe('reset')
    const { rows: [row] } = await db.query<{ expires: number }>(`select extract(epoch from expires_at) * 1000 as expires from service_node where id = $1`, [victimId])
    const expiresAt = Number(row!.expires)
    await automine(true)
    await mine()
    const attempts: Attempt[] = []
    const answer = await swapWithRetries(() => [nodes[0]!], key, attempts)

    // Refused (409, the holder alive as far as anyone can tell) until D's heartbeat ran out, then taken over.
    expect(attempts.filter((a) => a.at < expiresAt).map((a) => a.status)).toEqual(attempts.filter((a) => a.at < expiresAt).map(() => 409))
    expect(attempts.at(-1)!.at).toBeGreaterThanOrEqual(expiresAt)
    expect(answer.body.id).toBe(stableUuid(account.accountId, 'swap/execute', key))
    expect(shardsAtKill).toBeGreaterThan(0)
    // The key is taken over by the retry's own claim as soon as D's heartbeat has run out; D is
    // retired, and its shards taken, by the next lease renewal of a live node (a third of a lease).
    const victimState = async () => (await db.query<{ stopped: boolean; shards: number; claims: number }>(
      `select stopped_at is not null as stopped, (select count(*)::int from shard_lease where owner = $1) as shards,
              (select count(*)::int from idempotency_key where holder_node = $1 and status = 'in_flight') as claims
         from service_node where id = $1`, [victimId])).rows[0]
    await expect.poll(victimState, { timeout: LEASE_SECONDS * 1000 + 5000 }).toEqual({ stopped: true, shards: 0, claims: 0 })
    expect((await liveNodes()).map((n) => n.id)).not.toContain(victimId)
    await expect.poll(async () => (await liveNodes()).reduce((sum, n) => sum + n.shards, 0)).toBe(64)
    await settledExactlyOnce()
    console.info(`another host: ${attempts.filter((a) => a.status === 409).length} retries refused (409) until its heartbeat ran out ${Math.round(expiresAt - attempts[0]!.at)} ms after the first; answered ${Math.round(attempts.at(-1)!.at - expiresAt)} ms after it; ${shardsAtKill} shards moved`)
  }, 60_000)

  it('kill -9 of the node serving a streamed chat turn and a swap\'s event stream: each client reconnects to another node with Last-Event-ID and sees the rest and the end, each event once', async () => {
    const [survivor, victim] = [nodes[0]!, nodes[2]!]
    // Blocks wait, so the swap (and the chat turn's swap) is still on its way when the streams are cut.
    await automine(false)
    const key = 'streamed-swap'
    const swapId = stableUuid(account.accountId, 'swap/execute', key)
    const answer = swapWithRetries(() => [survivor], key, [])
    await waitFor(async () => (await db.query(`select 1 from wallet_op where id = $1`, [swapId])).rowCount === 1, 20_000)
    const seen: SseEvent[] = []
    const url = (n: ServerProcess) => `${n.url}/api/v1/swap/${swapId}/events`
    const first = readSse(url(victim), { apiKey: account.apiKey, onEvent: (e) => seen.push(e) }).catch(() => null)
    // The chat turn: the model asks for a swap (it waits for its block), then answers.
    const message = 'swap while the node dies'
    answerAt(model, message, 0, { toolCalls: [swapCall('call_0', '0.001')] })
    answerAt(model, message, 1, { content: 'Swapped.' })
    const chat: SseEvent[] = []
    const chatUrl = `${victim.url}/api/v1/agents/${talker.id}/chat`
    const firstChat = readSse(chatUrl, { apiKey: account.apiKey, body: { message, stream: true }, onEvent: (e) => chat.push(e) }).catch(() => null)
    await waitFor(() => seen.length > 0 && chat.some((e) => e.event === 'status' && e.data.status === 'acting'), 20_000)
    const turnId: string = chat.find((e) => e.event === 'status')!.data.id
    const { rows: [turnShard] } = await db.query<{ owner: string }>(`select owner from shard_lease where shard = $1`, [shardOf(turnId)])
    const victimId = (await liveNodes()).find((n) => n.pid === victim.child.pid)!.id
    await kill9(victim, { group: false })
    await Promise.all([first, firstChat])
    const [cutAt, chatCutAt] = [seen.length, chat.length]
    await automine(true)
    await mine()
    const lastChatId = chat.filter((e) => e.id !== null).at(-1)!.id!
    const [rest, chatRest] = await Promise.all([
      readSse(url(survivor), { apiKey: account.apiKey, lastEventId: seen.at(-1)!.id!, onEvent: (e) => seen.push(e) }),
      readSse(`${survivor.url}/api/v1/agents/${talker.id}/chat/${turnId}/events`, { apiKey: account.apiKey, lastEventId: lastChatId, onEvent: (e) => chat.push(e) }),
    ])
    expect([rest.status, chatRest.status]).toEqual([200, 200])
    const ids = seen.map((e) => Number(e.id))
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toEqual([...ids].sort((x, y) => x - y))
    const statuses = seen.map((e) => e.data.status)
    expect(new Set(statuses).size).toBe(statuses.length)
    expect(statuses.at(-1)).toBe('confirmed')
    expect(seen.length).toBeGreaterThan(cutAt)
    expect((await answer).body.id).toBe(swapId)

    // The turn's status events, on both streams: each journal id once, in order, ending with the answer.
    const chatIds = chat.filter((e) => e.id !== null).map((e) => Number(e.id))
    expect(new Set(chatIds).size).toBe(chatIds.length)
    expect(chatIds).toEqual([...chatIds].sort((x, y) => x - y))
    expect(chatRest.events.length).toBeGreaterThan(0)
    expect(chat.length).toBeGreaterThan(chatCutAt)
    expect(chat.at(-1)).toMatchObject({ event: 'status', data: { id: turnId, status: 'completed', content: 'Swapped.', toolCalls: [{ id: 'call_0', status: 'ok' }] } })
    // The turn completed once: each message written once (user, the tool call, its result, the answer), one swap of the talker's wallet.
    const messages = (await db.query<{ role: string }>(`select role from chat_message where turn_id = $1 order by created_at`, [turnId])).rows.map((r) => r.role)
    expect(messages).toEqual(['user', 'assistant', 'tool', 'assistant'])
    const talkerOps = (await db.query<{ status: string }>(`select a.status from wallet_op o join actor a on a.id = o.id where o.agent_id = $1`, [talker.id])).rows
    expect(talkerOps).toEqual([{ status: 'confirmed' }])
    await settledExactlyOnce()
    console.info(`streams cut at swap event ${cutAt}, chat event ${chatCutAt}; the turn's shard was ${turnShard!.owner === victimId ? 'the killed node\'s (it completed on its new owner)' : 'another node\'s'}`)
  }, 60_000)

  it('SIGTERM: a request on a keep-alive connection during the drain is served with Connection: close, the one in flight finishes, nothing is reset', async () => {
    const node = nodes[0]!
    const keepAlive = new nodeHttp.Agent({ keepAlive: true, maxSockets: 1 })
    const url = `${node.url}/api/v1/agents/${agent.id}`
    expect(await getOn(keepAlive, url)).toMatchObject({ status: 200, connection: 'keep-alive' })
    await automine(false)
    const key = 'drained-swap'
    const inFlight = api(node)('POST', '/swap/execute', swapBody(), { 'idempotency-key': key })
    await waitFor(async () => (await db.query(`select 1 from chain_tx t join effect e on e.id = t.effect_id where e.actor_id = $1`,
      [stableUuid(account.accountId, 'swap/execute', key)])).rowCount === 1, 20_000)
    const exited = new Promise<number | null>((r) => node.child.once('exit', (code) => r(code)))
    process.kill(node.child.pid!, 'SIGTERM')
    // Requests on the open connection until the node's answer says it is closing: each served.
    const served: Array<{ status: number; connection: string | undefined; reused: boolean }> = []
    while (served.at(-1)?.connection !== 'close') served.push(await getOn(keepAlive, url))
    await mine()
    const answer = await inFlight
    expect(served.map((r) => [r.status, r.reused])).toEqual(served.map(() => [200, true]))
    expect([answer.status, answer.body.status]).toEqual([200, 'confirmed'])
    expect(await exited).toBe(0)
    keepAlive.destroy()
  }, 60_000)
})
