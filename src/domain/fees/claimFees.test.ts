import { describe, expect, it } from 'vitest'
import { claimFees, previewClaimFees, type ClaimFeesDeps } from './claimFees.ts'
import type { ClaimOpView, CreatorFeePosition, CreatorToken, FoundOperation } from './ports.ts'
import type { AgentRecord } from '../agents/ports.ts'
import { NotFoundError } from '../errors.ts'

const E18 = 10n ** 18n
const wallet = '0x00000000000000000000000000000000000000c0'
const payout = '0x00000000000000000000000000000000000000aa'
const token: CreatorToken = {
  address: '0x00000000000000000000000000000000000000a1', symbol: 'FEEA', name: 'Fee', venue: 'venue-a', quoteSymbol: 'ETH', poolAddress: null, creatorAddress: wallet,
}

/** Plain objects for every port: the use case runs with no database, chain or network. */
function fakePorts(position: CreatorFeePosition, agent: Partial<AgentRecord> = {}) {
  const ops = new Map<string, FoundOperation & { view: ClaimOpView }>()
  const started: unknown[] = []
  const deps: ClaimFeesDeps = {
    agents: {
      getOwned: async (accountId, agentId) => {
        if (accountId !== 'acc' || agentId !== 'ag') throw new NotFoundError('Agent')
        return { id: 'ag', walletAddress: wallet, payoutWallet: payout, status: 'stopped', policy: {}, ...agent } as AgentRecord
      },
    },
    tokens: { ofAgent: async ({ tokenAddress }) => (tokenAddress && tokenAddress !== token.address ? [] : [token]) },
    chain: {
      chainId: 1,
      quoteDecimals: () => 18,
      atLatestBlock: async () => ({
        block: 7n,
        quote: async () => ({ usd18: 3000n * E18, source: null, sourceType: 'pool' as const }),
      }) as never,
      positions: async (tokens) => tokens.map(() => position),
    },
    operations: {
      assertNoneInFlight: async () => {},
      find: async (opId) => ops.get(opId),
      start: async (p) => {
        started.push(p)
        const view = { id: p.opId, agentId: p.agentId, status: 'confirmed', txHash: '0x1', error: null, gasUsed: '1', blockNumber: '8' }
        if (!ops.has(p.opId)) ops.set(p.opId, { accountId: p.accountId, isWalletOp: true, agentId: p.agentId, params: p.params, view })
        return ops.get(p.opId)!.view
      },
    },
  }
  return { deps, started }
}
const left = { earned: 5n * 10n ** 15n, claimed: 0n, earnedToken: 0n, claimedToken: 0n }

describe('claimFees with plain-object ports', () => {
  it('plans one claim per token with fees left, to the payout wallet, and starts it once per operation id', async () => {
    const { deps, started } = fakePorts(left)
    const claim = await claimFees(deps, { accountId: 'acc', agentId: 'ag', operationId: 'op-1' })
    expect(claim).toMatchObject({ id: 'op-1', status: 'confirmed', to: payout, claims: [{ tokenAddress: token.address, amount: '0.005', to: payout, txHash: null }] })
    expect(started).toEqual([{ opId: 'op-1', accountId: 'acc', agentId: 'ag', params: { claims: [expect.objectContaining({ expectedAmount: '0.005' })] } }])
    // A retry with the same id plans nothing (the fees are claimed by then) and answers the same claim.
    expect(await claimFees(deps, { accountId: 'acc', agentId: 'ag', operationId: 'op-1' })).toEqual(claim)
    expect(started).toHaveLength(2)
    expect((started[1] as { params: object }).params).toEqual({})
  })

  it('refuses a reused operation id for another token or another account, before anything starts', async () => {
    const { deps, started } = fakePorts(left)
    await claimFees(deps, { accountId: 'acc', agentId: 'ag', operationId: 'op-2' })
    await expect(claimFees(deps, { accountId: 'acc', agentId: 'ag', tokenAddress: `0x${'0'.repeat(38)}b1`, operationId: 'op-2' })).rejects.toMatchObject({ code: 'idempotency_key_reused' })
    await expect(claimFees(deps, { accountId: 'other', agentId: 'ag', operationId: 'op-2' })).rejects.toMatchObject({ code: 'not_found' })
    expect(started).toHaveLength(1)
  })

  it('nothing left, a paused policy or a deleted agent: refused, nothing started', async () => {
    const none = fakePorts({ ...left, claimed: left.earned })
    await expect(claimFees(none.deps, { accountId: 'acc', agentId: 'ag', operationId: 'op-3' })).rejects.toMatchObject({ code: 'nothing_to_claim' })
    const paused = fakePorts(left, { policy: { paused: true } })
    await expect(claimFees(paused.deps, { accountId: 'acc', agentId: 'ag', operationId: 'op-4' })).rejects.toMatchObject({ code: 'policy_violation', status: 403 })
    const deleted = fakePorts(left, { status: 'deleted' })
    await expect(claimFees(deleted.deps, { accountId: 'acc', agentId: 'ag', operationId: 'op-5' })).rejects.toMatchObject({ status: 409 })
    expect([...none.started, ...paused.started, ...deleted.started]).toEqual([])
  })

  it('previews what would be claimed, in USD, without starting anything', async () => {
    const { deps, started } = fakePorts(left)
    expect(await previewClaimFees(deps, { accountId: 'acc', agentId: 'ag' })).toEqual({
      agentId: 'ag', to: payout, claimableUsd: '15.00', claims: [expect.objectContaining({ tokenAddress: token.address, expectedAmount: '0.005' })],
    })
    expect(started).toEqual([])
  })
})
