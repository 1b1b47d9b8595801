import { describe, expect, it } from 'vitest'
import { listOpsActors, type ListOpsActorsDeps } from './inspectActors.ts'
import { resolveDeadLetter, type ResolveDeadLetterDeps } from './opsActions.ts'
import { listAgentOperations, type ListAgentOperationsDeps } from './agentOperations.ts'

const at = '2026-11-28T00:00:00.000Z'
const summary = (id: string, kind: string, parentId: string | null = null) => ({
  id, kind, accountId: 'acc', status: 'confirmed', version: 3, stuckReason: null, parentId, createdAt: at, updatedAt: at,
})

/** Plain objects for the ports a use case names; whatever else it touches fails the test. */
const fake = <T>(parts: Record<string, unknown>) => parts as T

describe('listOpsActors: the search term, split between the service and the runtime', () => {
  const calls: unknown[] = []
  const deps = fake<ListOpsActorsDeps>({
    runtime: { inspect: { listActors: async (q: unknown) => (calls.push(q), []) } },
    store: { effectIdsOfTx: async () => ['eff-1', 'req-1'], agentIdsOfWallet: async () => ['agent-1'] },
  })

  it('a transaction hash asks the outbox for its effects, the runtime for their actors', async () => {
    await listOpsActors(deps, { q: ` 0x${'AB'.repeat(32)} `, limit: 10 })
    expect(calls.at(-1)).toEqual({ limit: 10, match: { effectIds: ['eff-1', 'req-1'] } })
  })

  it("an address: the agents with that wallet, or a launch's token; an agent id: the agent and what names it", async () => {
    await listOpsActors(deps, { q: `0x${'Cd'.repeat(20)}`, agentId: 'agent-9', limit: 5 })
    expect(calls.at(-1)).toEqual({
      limit: 5,
      namedBy: { key: 'agentId', id: 'agent-9', kind: 'agent' },
      match: { ids: ['agent-1'], context: { kind: 'launch', key: 'tokenAddress', value: `0x${'cd'.repeat(20)}` } },
    })
  })

  it('anything else is an actor id; no term, no match', async () => {
    await listOpsActors(deps, { q: ' run-1 ', limit: 5 })
    expect(calls.at(-1)).toEqual({ limit: 5, match: { ids: ['run-1'] } })
    await listOpsActors(deps, { q: '', failed: true, limit: 5 })
    expect(calls.at(-1)).toEqual({ failed: true, limit: 5 })
  })
})

describe('resolveDeadLetter', () => {
  it('refuses to retry an event its kind lists as unsafe to replay, and resolves nothing', async () => {
    let resolved = false
    const deps = fake<ResolveDeadLetterDeps>({
      runtime: {
        inspect: { openDeadLetter: async () => ({ kind: 'launch', event: { type: 'launch.begin' } }), unsafeToReplay: (k: string, t: string) => k === 'launch' && t === 'launch.begin' },
        admin: { resolveDeadLetter: async () => ((resolved = true), undefined) },
      },
      store: {},
    })
    const operator = { accountId: 'op', via: 'key' as const, keyId: 'k', address: null }
    await expect(resolveDeadLetter(deps, { seq: 7, resolution: 'retried', operator, reason: 'r' })).rejects.toMatchObject({ code: 'retry_moves_funds', status: 409 })
    expect(resolved).toBe(false)
  })

  it("a discard is audited in the runtime's transaction", async () => {
    const audits: unknown[] = []
    const tx = { query: async () => ({ rows: [] }) }
    const deps = fake<ResolveDeadLetterDeps>({
      runtime: {
        inspect: {},
        admin: {
          resolveDeadLetter: async (input: { seq: number; resolution: string }, alongside: (tx: unknown, d: unknown) => Promise<void>) => {
            const done = { actorId: 'a1', accountId: 'acc', seq: input.seq, event: { type: 'x' }, error: 'bad', resolution: input.resolution, dedupeKey: null }
            await alongside(tx, done)
            return done
          },
        },
      },
      store: { writeAudit: async (e: unknown, db: unknown) => void audits.push({ e, db }) },
    })
    const operator = { accountId: 'op', via: 'key' as const, keyId: 'k', address: null }
    expect(await resolveDeadLetter(deps, { seq: 7, resolution: 'discarded', operator, reason: 'noise' })).toEqual({ seq: 7, actorId: 'a1', resolution: 'discarded' })
    expect(audits).toEqual([{ e: expect.objectContaining({ action: 'ops.deadletter.discard', subjectId: 'a1', reason: 'noise' }), db: tx }])
  })
})

describe('listAgentOperations: the runtime page joined with the operations\' records', () => {
  it("names what started each: the parent actor, else the parent its record names; `next` from the runtime's cursor text", async () => {
    const rows = [
      { ...summary('op-1', 'walletop', 'turn-1'), context: { kind: 'transfer', params: { native: true, amount: '10' } }, createdText: 't1', parent: { id: 'turn-1', kind: 'chatturn', status: 'done' } },
      { ...summary('op-2', 'walletop'), context: { kind: 'claim', params: {} }, createdText: 't2', parent: null },
      { ...summary('op-3', 'walletop'), context: { kind: 'claim', params: {} }, createdText: 't3', parent: null },
    ]
    const asked: unknown[] = []
    const deps = fake<ListAgentOperationsDeps>({
      runtime: {
        inspect: {
          owner: async () => ({ accountId: 'acc', status: 'running' }),
          actorsNamingPage: async () => rows,
          listActors: async (q: unknown) => (asked.push(q), [summary('run-1', 'run')]),
        },
      },
      store: { walletOpFacts: async () => new Map([['op-1', { usdValue: '1.00', parentId: null }], ['op-2', { usdValue: null, parentId: 'run-1' }]]) },
    })
    const { operations, next } = await listAgentOperations(deps, { agentId: 'agent-1', limit: 2 })
    expect(operations.map((o) => [o.id, o.usdValue, o.startedBy])).toEqual([
      ['op-1', '1.00', { id: 'turn-1', kind: 'chatturn', status: 'done' }],
      ['op-2', null, { id: 'run-1', kind: 'run', status: 'confirmed' }],
    ])
    expect(operations[0]!.amounts.out).toEqual({ amount: '0.00000000000000001', symbol: 'ETH', token: null })
    expect(asked).toEqual([{ match: { ids: ['run-1'] }, limit: 1 }])
    expect(next).toEqual({ createdAt: 't2', id: 'op-2' })
  })
})
