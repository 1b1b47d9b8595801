import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { createNodeBus, type NodeBus } from '../src/actors/runtime/nodeBus.ts'
import { createChatBus, type ChatBusEvent } from '../src/actors/conversation/chatBus.ts'
import { createLogger } from '../src/logger.ts'
import { createTestDatabase } from './support/db.ts'

const logger = createLogger({ level: 'silent' })
let db: { url: string; drop(): Promise<void> }
let pool: pg.Pool
const buses: NodeBus[] = []

async function bus(): Promise<NodeBus> {
  const b = createNodeBus({ url: db.url, pool, logger, retryMs: 50 })
  buses.push(b)
  return b
}

/** Waits for a condition (never for a fixed time), up to 10 s. */
async function until(check: () => boolean): Promise<void> {
  const end = Date.now() + 10_000
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 20))
  }
}

beforeAll(async () => {
  db = await createTestDatabase()
  pool = new pg.Pool({ connectionString: db.url, max: 2 })
})
afterAll(async () => {
  for (const b of buses) await b.stop()
  await pool.end()
  await db.drop()
})

describe('the node bus (Postgres LISTEN/NOTIFY)', () => {
  it('a chat stream event with no listener on its node reaches the node holding the stream; one with a local listener stays local', async () => {
    const [na, nb] = [await bus(), await bus()]
    const [chatA, chatB] = [createChatBus(na), createChatBus(nb)]
    await na.start()
    await nb.start()
    const onB: ChatBusEvent[] = []
    const onA: ChatBusEvent[] = []
    chatB.subscribe('turn-1', (e) => onB.push(e))
    chatA.subscribe('turn-2', (e) => onA.push(e))
    chatA.publish('turn-1', { type: 'delta', content: 'hel' })
    chatA.publish('turn-1', { type: 'tool_call', id: 'c1', name: 'get_price', arguments: '{}' })
    chatA.publish('turn-2', { type: 'delta', content: 'mine' })
    await until(() => onB.length === 2)
    expect(onB).toEqual([{ type: 'delta', content: 'hel' }, { type: 'tool_call', id: 'c1', name: 'get_price', arguments: '{}' }])
    expect(onA).toEqual([{ type: 'delta', content: 'mine' }])
  })

  it('a lost connection is made again, listeners are told (nudges may have been missed), and nudges flow again', async () => {
    const b = await bus()
    const heard: string[] = []
    let reconnects = 0
    b.subscribe('probe', (p) => heard.push(p))
    b.onReconnect(() => reconnects++)
    await b.start()
    const admin = new pg.Client({ connectionString: db.url })
    await admin.connect()
    try {
      // Every backend listening on a channel: kill them (the node's listening connection among them).
      await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and query ilike 'listen%'`)
      await until(() => reconnects === 1)
      b.publish('probe', 'after')
      await until(() => heard.includes('after'))
    } finally {
      await admin.end()
    }
  })
})
