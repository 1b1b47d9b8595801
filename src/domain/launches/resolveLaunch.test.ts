import { describe, expect, it } from 'vitest'
import { PolicyViolationError } from '../agents/policyCheck.ts'
import { ValidationError } from '../errors.ts'
import { readLaunchRequest, type LaunchInput } from './launch.schema.ts'
import { launchToken } from './launchToken.ts'
import { resolveLaunch, type ResolveLaunchDeps } from './resolveLaunch.ts'
import type { LaunchAgent, LaunchPorts, LaunchRecord } from './ports.ts'

const ACCOUNT = '00000000-0000-4000-8000-000000000001'
const OTHER = '00000000-0000-4000-8000-000000000002'
const AGENT = '00000000-0000-4000-8000-0000000000a1'

/** The ports as plain in-memory objects: an agent of another account is absent. */
function ports(agent: LaunchAgent = { status: 'stopped', policy: {} }): ResolveLaunchDeps {
  return {
    agents: { forLaunch: async (accountId, agentId) => (accountId === ACCOUNT && agentId === AGENT ? agent : undefined) },
    venues: { quotes: (venue) => (venue === 'venue-b' ? ['USDC'] : ['ETH', 'USDC']), isVerifiedSymbol: async (s) => s.toUpperCase() === 'USDC' },
    prices: { quoteToken: async (symbol) => ({ symbol }), seedUsd: async () => '250.00', unitUsd18: async () => undefined },
    spend: { spentTodayUsd: async () => '0', reserve: async () => {} },
  }
}
const body = { agentId: AGENT, symbol: 'MOON', name: 'Moon', quote: 'ETH' }
const errorsOf = async (p: Promise<unknown>) => {
  const err = await p.then(() => undefined, (e: unknown) => e)
  expect(err).toBeInstanceOf(ValidationError)
  return { ...(err as ValidationError).fieldErrors }
}

describe('launch validation with in-memory ports', () => {
  it("returns the machine input for the account's own agent", async () => {
    const { input } = await resolveLaunch(ports(), readLaunchRequest(ACCOUNT, 'venue-a', body), 'launch-1')
    expect(input).toMatchObject({ launchId: 'launch-1', accountId: ACCOUNT, agentId: AGENT, venue: 'venue-a', symbol: 'MOON', quote: 'ETH' })
  })

  it("names the field for another account's agent and for a deleted one", async () => {
    expect(await errorsOf(resolveLaunch(ports(), readLaunchRequest(OTHER, 'venue-a', body), 'l'))).toEqual({ agentId: 'No such agent in this account.' })
    const deleted = ports({ status: 'deleted', policy: {} })
    expect(await errorsOf(resolveLaunch(deleted, readLaunchRequest(ACCOUNT, 'venue-a', body), 'l'))).toEqual({ agentId: 'The agent is deleted.' })
  })

  it("names the schema's and the lookups' bad fields in one answer", async () => {
    const req = readLaunchRequest(OTHER, 'venue-b', { ...body, symbol: 'bad sym', quote: 'ETH', seedAmount: '1', extra: 1 })
    expect(Object.keys(await errorsOf(resolveLaunch(ports(), req, 'l'))).sort()).toEqual(['agentId', 'extra', 'quote', 'seedAmount', 'symbol'])
    const verified = readLaunchRequest(ACCOUNT, 'venue-a', { ...body, symbol: 'USDC' })
    expect(await errorsOf(resolveLaunch(ports(), verified, 'l'))).toEqual({ symbol: 'USDC is the symbol of a verified asset; a launch cannot take it.' })
  })

  it('refuses when the effective policy (as the repository returns it) is paused', async () => {
    const paused = resolveLaunch(ports({ status: 'stopped', policy: { paused: true } }), readLaunchRequest(ACCOUNT, 'venue-a', body), 'l')
    await expect(paused).rejects.toBeInstanceOf(PolicyViolationError)
    await expect(paused).rejects.toMatchObject({ code: 'policy_violation', status: 403 })
  })

  it('values a self-funded seed against the caps; other venues move $0', async () => {
    const capped = ports({ status: 'stopped', policy: { max_trade_usd: '100' } })
    await expect(resolveLaunch(capped, readLaunchRequest(ACCOUNT, 'self-funded', { ...body, seedAmount: '0.1' }), 'l')).rejects.toMatchObject({ rule: 'max_trade_usd' })
    expect((await resolveLaunch(capped, readLaunchRequest(ACCOUNT, 'venue-a', body), 'l')).usdValue).toBe('0.00')
  })
})

/** Launch actors in a Map: what launchToken reads and writes of the runtime. */
function memoryLaunches() {
  const rows = new Map<string, LaunchRecord>()
  const sent: string[] = []
  const at = '2026-11-23T12:00:00.000Z'
  const actors: LaunchPorts['actors'] = {
    find: async (id) => rows.get(id),
    async create(input: LaunchInput) {
      if (rows.has(input.launchId)) return
      const context = { ...input, gas: null, txHash: null, tokenAddress: null, poolAddress: null, error: null, approval: null }
      rows.set(input.launchId, { id: input.launchId, accountId: input.accountId, isLaunch: true, status: 'pending', context, createdAt: at, updatedAt: at })
    },
    async start(id) {
      const r = rows.get(id)
      if (r?.status === 'pending') r.status = 'simulating'
      return r
    },
    waitEnd: async (id) => rows.get(id),
  }
  const deps = { ...ports(), actors, simulator: {
      async simulate(i: LaunchInput) {
        sent.push(i.launchId)
        return { gas: 21_000n, maxFeePerGas: 1n }
      },
      predict: () => Promise.reject(new Error('not used by a launch')),
    },
  }
  return { deps, rows, sent }
}

describe('launchToken with in-memory ports', () => {
  it('a retry with the same launch id answers the launch it made and simulates nothing again', async () => {
    const { deps, rows, sent } = memoryLaunches()
    const req = { ...readLaunchRequest(ACCOUNT, 'venue-a', body), launchId: 'launch-1' }
    const first = await launchToken(deps, req)
    expect(first).toMatchObject({ id: 'launch-1', status: 'simulating', progress: { step: 'simulating', percent: 15 } })
    expect((await launchToken(deps, req)).id).toBe('launch-1')
    expect([rows.size, sent]).toEqual([1, ['launch-1']])
  })

  it('refuses the same launch id for another request, and from another account', async () => {
    const { deps } = memoryLaunches()
    await launchToken(deps, { ...readLaunchRequest(ACCOUNT, 'venue-a', body), launchId: 'launch-1' })
    await expect(launchToken(deps, { ...readLaunchRequest(ACCOUNT, 'venue-a', { ...body, symbol: 'SUN' }), launchId: 'launch-1' }))
      .rejects.toMatchObject({ code: 'idempotency_key_reused', status: 422 })
    await expect(launchToken(deps, { ...readLaunchRequest(OTHER, 'venue-a', body), launchId: 'launch-1' })).rejects.toMatchObject({ code: 'not_found' })
  })
})
