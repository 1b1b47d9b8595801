import { describe, expect, it } from 'vitest'
import { createAgentRowCache } from './agentRowCache.ts'
import { getAgent } from './getAgent.ts'
import { startAgent } from './startAgent.ts'
import { updateAgent } from './updateAgent.ts'
import { NotFoundError } from '../errors.ts'
import type { AgentActors, AgentCommand, AgentRecord, AgentsRepository } from './ports.ts'

const record = (over: Partial<AgentRecord> = {}): AgentRecord => ({
  id: 'agent-1', accountId: 'acc-1', name: 'a', model: 'm', skills: [], systemPrompt: null, payoutWallet: null, persona: null,
  strategy: null, temperature: null, isPublic: false, publicDescription: null, runIntervalSeconds: 0, mode: 'live', policy: {},
  walletAddress: '0x1111111111111111111111111111111111111111', createdAt: '2026-11-23T12:00:00.000Z',
  updatedAt: '2026-11-23T12:00:00.000Z', cursorAt: '2026-11-23T12:00:00.000Z', status: 'stopped', statusReason: null, pending: [], ...over,
})

/** The agents repository and the agent actor port in memory: an agent of another account is absent. */
function memoryPorts(rows: AgentRecord[]) {
  const sent: AgentCommand[] = []
  const updates: unknown[] = []
  const status = new Map(rows.map((r) => [r.id, r.status]))
  const findOwned = async (accountId: string, id: string) => rows.find((r) => r.id === id && r.accountId === accountId)
  const agents = {
    findOwned,
    getOwned: async (accountId: string, id: string) => (await findOwned(accountId, id)) ?? Promise.reject(new NotFoundError('Agent')),
    updateConfig: async (input: unknown) => (updates.push(input), true),
  } as unknown as AgentsRepository
  const actors: AgentActors = {
    create: () => Promise.reject(new Error('not used')),
    scheduleChanged: () => Promise.reject(new Error('not used')),
    status: async (accountId, id) => {
      const r = rows.find((x) => x.id === id && x.accountId === accountId)
      return r && { status: status.get(id)!, reason: null }
    },
    send: async (id, command) => {
      sent.push(command)
      status.set(id, command === 'agent.start' ? 'running' : 'stopped')
      return { status: status.get(id)!, reason: null }
    },
  }
  return { agents, actors, rows: createAgentRowCache({ ttlMs: 60_000 }), sent, updates }
}

describe('agent use cases over their ports', () => {
  it('getAgent lays the actor live status over the row, and hides another account\'s agent', async () => {
    const deps = memoryPorts([record()])
    await deps.actors.send('agent-1', 'agent.start')
    expect(await getAgent(deps, { accountId: 'acc-1', agentId: 'agent-1' })).toMatchObject({ id: 'agent-1', status: 'running' })
    await expect(getAgent(deps, { accountId: 'acc-2', agentId: 'agent-1' })).rejects.toBeInstanceOf(NotFoundError)
  })

  it('startAgent sends nothing for another account\'s agent', async () => {
    const deps = memoryPorts([record()])
    await expect(startAgent(deps, { accountId: 'acc-2', agentId: 'agent-1' })).rejects.toBeInstanceOf(NotFoundError)
    expect(deps.sent).toEqual([])
    expect(await startAgent(deps, { accountId: 'acc-1', agentId: 'agent-1' })).toMatchObject({ status: 'running' })
    expect(deps.sent).toEqual(['agent.start'])
  })

  it('updateAgent refuses a deleted agent and writes only the fields given', async () => {
    const deps = memoryPorts([record(), record({ id: 'agent-2', status: 'deleted' })])
    const tx = { withTransaction: <T>(fn: (db: never) => Promise<T>) => fn(undefined as never), whitelistHoldSeconds: 0, guardrails: { apply: async () => {} } }
    const actor = { type: 'key', keyId: null } as const
    await expect(updateAgent({ ...deps, ...tx }, { accountId: 'acc-1', agentId: 'agent-2', actor, name: 'x' })).rejects.toMatchObject({ code: 'invalid_state' })
    await updateAgent({ ...deps, ...tx }, { accountId: 'acc-1', agentId: 'agent-1', actor, name: 'renamed', persona: undefined })
    expect(deps.updates).toEqual([{ accountId: 'acc-1', agentId: 'agent-1', set: { name: 'renamed' } }])
  })
})
