import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from './support/app.ts'
import { waitFor } from './support/waitFor.ts'

let app: TestApp
beforeAll(async () => {
  app = await startTestApp()
})
afterAll(async () => {
  await app?.close()
})

describe('stuck actors for operators', () => {
  it('an inbox event that fails validation is a dead letter: listed by GET /ops/actors?status=stuck, shown on the actor', async () => {
    const op = await app.account({ operator: true })
    const alice = await app.account()
    const id = randomUUID()
    const runtime = app.services.runtime
    await runtime.create('agent', { id, accountId: alice.accountId, input: { agentId: id, accountId: alice.accountId, tickMs: 60_000 } })
    expect((await op.api('GET', '/ops/actors?status=stuck')).body.actors.map((a: { id: string }) => a.id)).not.toContain(id)

    await runtime.enqueue(id, alice.accountId, { type: 'agent.explode' }, `bad:${id}`)
    await waitFor(async () => (await app.services.pool.query('select stuck_at from actor where id = $1', [id])).rows[0].stuck_at !== null)

    const stuck = await op.api('GET', '/ops/actors?status=stuck&limit=100')
    expect(stuck.status).toBe(200)
    const listed = stuck.body.actors.find((a: { id: string }) => a.id === id)
    expect(listed).toMatchObject({ id, kind: 'agent', status: 'stopped', stuckReason: expect.stringContaining('dead letter') })
    const one = await op.api('GET', `/ops/actors/${id}`)
    expect(one.body.deadLetters).toEqual([
      { seq: expect.any(Number), event: { type: 'agent.explode' }, error: expect.stringContaining('validation'), deadAt: expect.any(String) },
    ])
    // The machine never saw it.
    expect(one.body.journal.map((j: { event: { type: string } }) => j.event.type)).toEqual(['xstate.init'])
    expect((await alice.api('GET', '/ops/actors?status=stuck')).status).toBe(403)
  })
})
