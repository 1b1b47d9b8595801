import { describe, expect, it } from 'vitest'
import type pg from 'pg'
import type { ActorRuntime } from '../../actors/actorRuntime.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../errors.ts'
import type { AgentRecord, AgentsRepository } from '../agents/ports.ts'
import { createLaunchesService } from './launches.service.ts'

const ACCOUNT = '00000000-0000-4000-8000-000000000001'
const OTHER = '00000000-0000-4000-8000-000000000002'
const AGENT = '00000000-0000-4000-8000-0000000000a1'

const agent = (over: Partial<AgentRecord> = {}): AgentRecord => ({
  id: AGENT, accountId: ACCOUNT, name: 'a', model: 'm', skills: [], systemPrompt: null, payoutWallet: null, persona: null,
  strategy: null, temperature: null, isPublic: false, publicDescription: null, runIntervalSeconds: 0, policy: {},
  walletAddress: '0x1111111111111111111111111111111111111111', createdAt: '2026-11-23T12:00:00.000Z',
  updatedAt: '2026-11-23T12:00:00.000Z', cursorAt: '2026-11-23T12:00:00.000Z', status: 'stopped', statusReason: null, pending: [], ...over,
})

/** The repository port as a plain in-memory object: an agent of another account is absent. */
function memoryAgents(rows: AgentRecord[]): AgentsRepository {
  const findOwned = async (accountId: string, id: string) => rows.find((r) => r.id === id && r.accountId === accountId)
  const unused = () => Promise.reject(new Error('not used by launch validation'))
  return {
    findOwned,
    getOwned: async (accountId, id) => (await findOwned(accountId, id)) ?? Promise.reject(new NotFoundError('Agent')),
    assertOwned: async (accountId, id) => void ((await findOwned(accountId, id)) ?? Promise.reject(new NotFoundError('Agent'))),
    list: unused, insert: unused, whitelist: unused, addToWhitelist: unused, removeFromWhitelist: unused, updateConfig: unused,
  }
}

// Validation reads only the agents repository and the symbol check; the pool and the runtime are never touched.
const launches = (rows: AgentRecord[]) =>
  createLaunchesService({
    pool: undefined as unknown as pg.Pool,
    runtime: undefined as unknown as ActorRuntime,
    agents: memoryAgents(rows),
    quotes: { 'venue-a': ['ETH'], 'venue-b': ['USDC'], 'self-funded': ['ETH', 'USDC'] },
    precheck: async () => {},
    isVerifiedSymbol: async (s) => s === 'USDC',
  })
const body = { agentId: AGENT, symbol: 'MOON', name: 'Moon', quote: 'ETH' }

describe('launch validation with an in-memory agents repository', () => {
  it("returns the machine input for the account's own agent", async () => {
    const input = await launches([agent()]).validate(ACCOUNT, 'venue-a', body, 'launch-1')
    expect(input).toMatchObject({ launchId: 'launch-1', accountId: ACCOUNT, agentId: AGENT, venue: 'venue-a', symbol: 'MOON', quote: 'ETH' })
  })

  it("names the field for another account's agent and for a deleted one", async () => {
    await expect(launches([agent()]).validate(OTHER, 'venue-a', body, 'l')).rejects.toBeInstanceOf(ValidationError)
    expect(await launches([agent()]).accountFieldErrors(OTHER, 'venue-a', body)).toEqual({ agentId: 'No such agent in this account.' })
    expect(await launches([agent({ status: 'deleted' })]).accountFieldErrors(ACCOUNT, 'venue-a', body)).toEqual({ agentId: 'The agent is deleted.' })
  })

  it('refuses when the effective policy (as the repository returns it) is paused', async () => {
    const paused = launches([agent({ policy: { paused: true } })]).validate(ACCOUNT, 'venue-a', body, 'l')
    await expect(paused).rejects.toBeInstanceOf(ForbiddenError)
    await expect(paused).rejects.toMatchObject({ code: 'policy_violation' })
  })
})
