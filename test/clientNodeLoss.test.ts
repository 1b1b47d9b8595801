import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { createPublicClient, http, type Address } from 'viem'
import { ConnectionError, createClient, type AltsClient, type StatusEvent } from '../clients/typescript/src/index.ts'
import { createTestDatabase } from './support/db.ts'
import { adminCreateAccount, kill9, startServer, stopServer, serverCleanup, type ServerProcess } from './support/server.ts'
import { waitFor } from './support/waitFor.ts'

/*
 * The first-party client where a node dies under it: three node processes on one database and
 * chain (A runs the embedded chain, B and C join it), shard leases of 2 s. The callers below
 * hold no retry code: the client's policy (docs/api.md) retries with its own keys, on the next
 * node, and resumes event streams with Last-Event-ID.
 */
const LEASE_SECONDS = 2
const SWAPS = 20
const { servers, cleanups } = serverCleanup()
let db: pg.Pool
let nodes: ServerProcess[]
let account: { accountId: string; apiKey: string }
let agent: { id: string; walletAddress: Address }
let rpcUrl: string

/** What the client's fetch saw: each request's URL and headers, and each that got no answer. */
type Wire = { sent: Array<{ url: string; lastEventId: string | null; at: number }>; refused: Array<{ url: string; at: number }>; statuses: number[] }
const wireOf = (): Wire => ({ sent: [], refused: [], statuses: [] })

/** A client of the account on these nodes, first `first`, then the others in order; its fetch recorded in `wire`. */
function clientOn(order: ServerProcess[], wire: Wire = wireOf()): AltsClient {
  return createClient({ baseUrl: order.map((n) => n.url), apiKey: account.apiKey, fetch: clientOnFetch(wire) })
}

/** The global fetch, recording into `wire`. */
function clientOnFetch(wire: Wire): typeof fetch {
  return async (input, init) => {
      const request = new Request(input, init)
      wire.sent.push({ url: request.url, lastEventId: request.headers.get('last-event-id'), at: Date.now() })
      try {
        const res = await fetch(request)
        wire.statuses.push(res.status)
        return res
      } catch (error) {
        wire.refused.push({ url: request.url, at: Date.now() })
        throw error
      }
  }
}
const from = (i: number) => [...nodes.slice(i), ...nodes.slice(0, i)]
const swapBody = (agentId = agent.id) => ({ agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.001', slippageBps: 300 })
const liveNodes = async () =>
  (await db.query<{ id: string; pid: number }>(`select id, pid from service_node where stopped_at is null and expires_at > now() and not leaving`)).rows
const automine = (on: boolean) => createPublicClient({ transport: http(rpcUrl) }).request({ method: 'evm_setAutomine' as never, params: [on] as never })
const mine = () => createPublicClient({ transport: http(rpcUrl) }).request({ method: 'evm_mine' as never, params: [] as never })

/** The agent's swaps: each confirmed with exactly one confirmed transaction; the wallet's nonces contiguous on chain and in the outbox. */
async function settledExactlyOnce(agentId: string, address: Address): Promise<string[]> {
  await waitFor(async () => (await db.query(
    `select 1 from wallet_op o join actor a on a.id = o.id where o.agent_id = $1 and a.status not in ('confirmed', 'failed')`, [agentId])).rowCount === 0, 30_000)
  const ops = (await db.query<{ id: string; status: string; txs: number }>(
    `select o.id, a.status, (select count(*)::int from chain_tx t join effect e on e.id = t.effect_id where e.actor_id = o.id and t.status = 'confirmed') as txs
       from wallet_op o join actor a on a.id = o.id where o.agent_id = $1 and o.kind = 'swap'`, [agentId])).rows
  expect(ops.filter((o) => o.status !== 'confirmed' || o.txs !== 1)).toEqual([])
  const nonces = (await db.query<{ nonce: string }>(`select nonce from chain_tx where agent_id = $1 and status = 'confirmed' order by nonce`, [agentId])).rows.map((r) => Number(r.nonce))
  expect(nonces).toEqual(nonces.map((_, i) => i))
  expect(await createPublicClient({ transport: http(rpcUrl) }).getTransactionCount({ address })).toBe(nonces.length)
  return ops.map((o) => o.id)
}

beforeAll(async () => {
  const database = await createTestDatabase()
  const dataDir = mkdtempSync(join(tmpdir(), 'alts-clientloss-'))
  db = new pg.Pool({ connectionString: database.url, max: 2 })
  cleanups.push(async () => {
    await db.end()
    await database.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, SHARD_LEASE_SECONDS: String(LEASE_SECONDS), LOG_LEVEL: 'warn' }
  const a = await startServer(env)
  servers.push(a)
  rpcUrl = (JSON.parse(readFileSync(join(dataDir, 'chain', 'anvil.json'), 'utf8')) as { rpcUrl: string }).rpcUrl
  const joinEnv = { ...env, CHAIN_RPC_URL: rpcUrl.replace(/^http/, 'ws'), DEPLOYMENT_MANIFEST: join(dataDir, 'chain', 'manifest.json'), CHAIN_DEV: '1' }
  const [b, c] = await Promise.all([startServer(joinEnv), startServer(joinEnv)])
  servers.push(b, c)
  nodes = [a, b, c]
  account = await adminCreateAccount(env)
  const alts = clientOn([a])
  agent = (await alts.POST('/agents', { body: { name: 'loss', skills: [] } })) as typeof agent
  await alts.POST('/dev/faucet', { body: { agentId: agent.id, eth: '5' } as never })
  await waitFor(async () => (await liveNodes()).length === 3, 20_000)
}, 120_000)
afterAll(async () => {
  for (const n of nodes ?? []) await stopServer(n).catch(() => {})
})

describe('the client when a node dies', () => {
  it('a keyed request retried on the next node after no answer; a write without a key is not retried; a read is', async () => {
    const dead = 'http://127.0.0.1:1'
    const wire = wireOf()
    const alts = createClient({ baseUrl: [dead, nodes[0]!.url], apiKey: account.apiKey, fetch: clientOnFetch(wire) })
    const swap = (await alts.POST('/swap/execute', { body: swapBody() as never })) as { id: string; status: string }
    expect(swap.status).toBe('confirmed')
    expect(wire.refused.map((r) => new URL(r.url).origin)).toEqual([dead])
    const unkeyedWire = wireOf()
    const unkeyed = createClient({ baseUrl: [dead, nodes[0]!.url], apiKey: account.apiKey, fetch: clientOnFetch(unkeyedWire) })
    // An agent's update takes no Idempotency-Key: sent to a node that did not answer, it is not sent again.
    const before = (await db.query(`select name from agent where id = $1`, [agent.id])).rows[0].name
    const refused = await unkeyed.PATCH('/agents/{id}', { params: { path: { id: agent.id } }, body: { name: 'never' } as never }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(ConnectionError)
    expect((refused as ConnectionError).attempts).toBe(1)
    expect((await db.query(`select name from agent where id = $1`, [agent.id])).rows[0].name).toBe(before)
    // The node that did not answer is set aside for this client: its next call goes to the live one at once.
    expect(await unkeyed.GET('/agents/{id}', { params: { path: { id: agent.id } } })).toMatchObject({ id: agent.id })
    expect(unkeyedWire.refused).toHaveLength(1)
    // A read retried on the next node after no answer.
    const reader = createClient({ baseUrl: [dead, nodes[0]!.url], apiKey: account.apiKey })
    expect(await reader.GET('/agents/{id}', { params: { path: { id: agent.id } } })).toMatchObject({ id: agent.id })
  })

  it('409 idempotency_key_in_progress: the same key sent twice at once; the second waits Retry-After and gets the first answer replayed', async () => {
    await automine(false)
    const key = crypto.randomUUID()
    const [w1, w2] = [wireOf(), wireOf()]
    const first = clientOn([nodes[0]!], w1).POST('/swap/execute', { body: swapBody() as never, headers: { 'idempotency-key': key } })
    await waitFor(async () => (await db.query(`select 1 from idempotency_key where key = $1 and status = 'in_flight'`, [key])).rowCount === 1, 20_000)
    const second = clientOn([nodes[1]!], w2).POST('/swap/execute', { body: swapBody() as never, headers: { 'idempotency-key': key } })
    await waitFor(() => w2.statuses.includes(409), 20_000)
    await automine(true)
    await mine()
    const [a, b] = (await Promise.all([first, second])) as Array<{ id: string; status: string; meta: { requestId: string; replayOf?: string } }>
    expect(a).toMatchObject({ status: 'confirmed' })
    expect(b).toMatchObject({ id: a!.id, status: 'confirmed', meta: { replayOf: a!.meta.requestId } })
    expect(w2.statuses.filter((s) => s === 409).length).toBeGreaterThan(0)
    expect(w2.statuses.at(-1)).toBe(200)
    await settledExactlyOnce(agent.id, agent.walletAddress)
  })

  it(`kill -9 of a node with ${SWAPS} swaps in flight: every caller sees its swap confirmed, once, with no retry code of its own`, async () => {
    const victim = nodes[1]!
    const victimId = (await liveNodes()).find((n) => n.pid === victim.child.pid)!.id
    const before = (await settledExactlyOnce(agent.id, agent.walletAddress)).length
    await automine(false)
    const wires = Array.from({ length: SWAPS }, wireOf)
    // Each caller: one call, and a follow of the swap to its end (the answer is 202 if the swap outlives the wait).
    const callers = wires.map(async (wire, i) => {
      const alts = clientOn(from(i % 3), wire)
      const swap = (await alts.POST('/swap/execute', { body: swapBody() as never })) as { id: string }
      return alts.end(alts.follow.swap(swap.id))
    })
    await waitFor(async () => {
      const { rows } = await db.query<{ n: number; victim: number }>(
        `select count(*)::int as n, count(*) filter (where holder_node = $2)::int as victim
           from idempotency_key where account_id = $1 and status = 'in_flight'`, [account.accountId, victimId])
      return rows[0]!.n === SWAPS && rows[0]!.victim > 0
    }, 20_000)
    await kill9(victim, { group: false })
    await automine(true)
    await mine()
    const ends = await Promise.all(callers)

    expect(ends.map((s) => s.status)).toEqual(ends.map(() => 'confirmed'))
    expect(new Set(ends.map((s) => s.id)).size).toBe(SWAPS)
    expect(wires.filter((w) => w.refused.length > 0).length).toBeGreaterThan(0)
    const swaps = await settledExactlyOnce(agent.id, agent.walletAddress)
    expect(swaps.length - before).toBe(SWAPS)
    expect(ends.every((s) => swaps.includes(s.id))).toBe(true)
    nodes = nodes.filter((n) => n !== victim)
  }, 120_000)

  it('a swap followed to confirmed across the death of the node serving its stream: resumed on another node with Last-Event-ID, each state once', async () => {
    const [survivor, victim] = [nodes[0]!, nodes[1]!]
    const owner = clientOn([survivor])
    const careful = (await owner.POST('/agents', { body: { name: 'careful', policy: { max_trade_usd: '10000', max_daily_usd: '100000', require_approval_above_usd: '1' } } as never })) as typeof agent
    await owner.POST('/dev/faucet', { body: { agentId: careful.id, eth: '1' } as never })
    const swap = (await owner.POST('/swap/execute', { body: swapBody(careful.id) as never })) as { id: string; status: string }
    expect(swap.status).toBe('awaiting_approval')
    await automine(false)
    const wire = wireOf()
    const follower = clientOn([victim, survivor], wire)
    const seen: StatusEvent[] = []
    const followed = (async () => {
      const events = follower.follow.swap(swap.id)
      for (;;) {
        const next = await events.next()
        if (next.done) return next.value
        seen.push(next.value)
      }
    })()
    await waitFor(() => seen.some((e) => e.status === 'awaiting_approval'), 20_000)
    const waiting = seen.length
    await owner.POST('/approvals/{id}/approve', { params: { path: { id: swap.id } }, body: { reason: 'go' } as never })
    await waitFor(() => seen.length > waiting, 20_000)
    const cutAt = seen.length
    await kill9(victim, { group: false })
    const killedAt = Date.now()
    await automine(true)
    await mine()
    const final = await followed

    const story = JSON.stringify({ seen: seen.map((e) => [e.id, e.status]), cutAt, killedAt, wire })
    expect(final, story).toMatchObject({ id: swap.id, status: 'confirmed' })
    const ids = seen.map((e) => Number(e.id))
    expect(ids, story).toEqual([...new Set(ids)].sort((x, y) => x - y))
    // After the kill the client went to the survivor, and any stream it opened there resumed after the last event seen.
    const after = wire.sent.filter((s) => s.at >= killedAt)
    expect(after.length, story).toBeGreaterThan(0)
    expect(after.map((s) => new URL(s.url).origin), story).toEqual(after.map(() => survivor.url))
    for (const s of after.filter((x) => x.url.endsWith('/events'))) expect(Number(s.lastEventId), story).toBeGreaterThanOrEqual(Number(seen[cutAt - 1]!.id))
    await settledExactlyOnce(careful.id, careful.walletAddress)
  }, 60_000)
})
