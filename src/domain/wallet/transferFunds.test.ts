import { describe, expect, it } from 'vitest'
import type { Address } from 'viem'
import type { AgentRecord } from '../agents/ports.ts'
import { transferFunds } from './transferFunds.ts'
import { previewTransfer } from './previewTransfer.ts'
import { getPortfolio } from './getPortfolio.ts'
import type { TransferOperation, WalletPorts, WalletToken } from './ports.ts'

const accountId = 'acc'
const agentId = '11111111-1111-4111-8111-111111111111'
const wallet = '0x00000000000000000000000000000000000000dd' as Address
const friend = '0x00000000000000000000000000000000000f00d1' as Address
const stranger = '0x00000000000000000000000000000000000bad00' as Address
const tokens: Record<string, WalletToken> = {
  ETH: { address: '0x00000000000000000000000000000000000000aa' as Address, symbol: 'ETH', decimals: 18, native: true, verified: true },
  USDC: { address: '0x00000000000000000000000000000000000000bb' as Address, symbol: 'USDC', decimals: 6, native: false, verified: true },
}
const usd18 = (dollars: bigint) => dollars * 10n ** 18n

/** Plain objects for every port: the use cases run with no database, chain or network. */
function fakePorts({ policy = {}, held = 100_000_000n, eth = 10n ** 18n, prior }: { policy?: object; held?: bigint; eth?: bigint; prior?: TransferOperation } = {}) {
  const started: unknown[] = []
  const agent = { id: agentId, accountId, walletAddress: wallet, policy, status: 'running' } as unknown as AgentRecord
  const deps: WalletPorts = {
    agents: {
      getOwned: async (a, id) => {
        if (a !== accountId || id !== agentId) throw Object.assign(new Error('Agent not found.'), { code: 'not_found' })
        return agent
      },
      assertOwned: async () => {},
      whitelist: async () => [{ address: friend, label: 'friend', usableAt: '2020-01-01T00:00:00Z', createdAt: '2020-01-01T00:00:00Z' }],
    },
    tokens: { resolve: async (ref) => tokens[ref] ?? Object.values(tokens).find((t) => t.address === ref) },
    chain: {
      balanceOf: async (t) => (t.native ? eth : held),
      // $1 per USDC and $3000 per ETH.
      prices: async () => ({ usd: async (t, amount) => (t.native ? { unitUsd18: usd18(3000n), amountUsd18: (amount * 3000n) } : { unitUsd18: usd18(1n), amountUsd18: amount * 10n ** 12n }) }),
      transferFee: async () => ({ gasLimit: 60_000n, maxFeePerGas: 2_000_000_000n, ethBalance: eth }),
    },
    operations: {
      spentTodayUsd: async () => '0',
      find: async () => prior,
      start: async (p) => {
        started.push(p)
        return { id: p.opId, agentId: p.agentId, kind: 'transfer', status: 'confirmed', txHash: '0x1', error: null }
      },
      waitEnd: async (opId) => ({ id: opId, agentId, kind: 'transfer', status: 'confirmed', txHash: '0x1', error: null }),
    },
    portfolio: {
      standardTokens: async () => [tokens.ETH!, tokens.USDC!],
      otherTokenAddresses: async () => [tokens.USDC!.address, '0x00000000000000000000000000000000000000ee'],
      confirmedSwaps: async () => [],
      ledgerOps: async () => [],
      indexedPrices: async () => [],
      agentIdByWallet: async () => undefined,
      holding: async (t) => (t.native ? eth : held),
    },
    outbox: { page: async () => [] },
    clock: { now: () => Date.parse('2026-01-01T00:00:00Z') },
  }
  return { deps, started }
}

const ask = { accountId, agentId, to: friend, token: 'USDC', amount: '25', operationId: 'op-1' }

describe('transferFunds', () => {
  it('starts one transfer operation with its params, USD value and the policy check for under the lock', async () => {
    const { deps, started } = fakePorts({ policy: { max_daily_usd: '30' } })
    const t = await transferFunds(deps, ask)
    expect(t).toMatchObject({ id: 'op-1', status: 'confirmed', token: 'USDC', tokenAddress: tokens.USDC!.address, to: friend, amount: '25', valueUsd: '25.00' })
    expect(started).toEqual([expect.objectContaining({ opId: 'op-1', usdValue: '25.00', params: { token: tokens.USDC!.address, native: false, amount: '25000000', to: friend } })])
    const checkSpend = (started[0] as { checkSpend(spent: string): void }).checkSpend
    expect(() => checkSpend('5.01')).toThrow(expect.objectContaining({ code: 'policy_violation' }))
  })

  it('refuses an address off the whitelist, more than the balance and the policy before anything starts', async () => {
    const { deps, started } = fakePorts({ policy: { max_trade_usd: '10' } })
    await expect(transferFunds(deps, { ...ask, to: stranger })).rejects.toMatchObject({ code: 'address_not_whitelisted' })
    await expect(transferFunds(deps, { ...ask, amount: '100.01' })).rejects.toMatchObject({ code: 'insufficient_funds' })
    await expect(transferFunds(deps, ask)).rejects.toMatchObject({ code: 'policy_violation' })
    await expect(transferFunds(deps, { ...ask, token: 'NOPE' })).rejects.toMatchObject({ code: 'validation_failed', fieldErrors: { token: expect.any(String) } })
    expect(started).toEqual([])
  })

  it('answers a retry with the transfer already made (even with the funds gone), and refuses another body with its key', async () => {
    const params = { token: tokens.USDC!.address, native: false, amount: '25000000', to: friend }
    const prior: TransferOperation = { accountId, isTransfer: true, agentId, params, usdValue: '25.00', view: {} as never }
    const { deps, started } = fakePorts({ held: 0n, prior })
    expect(await transferFunds(deps, ask)).toMatchObject({ id: 'op-1', status: 'confirmed', valueUsd: '25.00', amount: '25' })
    await expect(transferFunds(deps, { ...ask, amount: '5' })).rejects.toMatchObject({ code: 'idempotency_key_reused' })
    await expect(transferFunds(fakePorts({ prior: { ...prior, accountId: 'other' } }).deps, ask)).rejects.toMatchObject({ code: 'not_found' })
    expect(started).toEqual([])
  })
})

describe('previewTransfer', () => {
  it('answers the amount, its value and the fee at most, and starts nothing', async () => {
    const { deps, started } = fakePorts()
    const p = await previewTransfer(deps, ask)
    expect(p).toMatchObject({ to: friend, toLabel: 'friend', token: 'USDC', amount: '25', valueUsd: '25.00', sent: false })
    expect(p.fee).toEqual({ gasLimit: '60000', maxFeePerGasWei: '2000000000', maxFeeEth: '0.00012', maxFeeUsd: '0.36' })
    expect(started).toEqual([])
  })
  it('refuses as the transfer would, and when the wallet lacks the ETH for the fee', async () => {
    await expect(previewTransfer(fakePorts().deps, { ...ask, to: stranger })).rejects.toMatchObject({ code: 'address_not_whitelisted' })
    await expect(previewTransfer(fakePorts({ eth: 10n }).deps, ask)).rejects.toMatchObject({ code: 'insufficient_funds' })
  })
})

describe('getPortfolio', () => {
  it('lists ETH always, other tokens once and only when held, with a total of the priced ones', async () => {
    const p = await getPortfolio(fakePorts({ held: 2_500_000n, eth: 10n ** 18n }).deps, { accountId, agentId })
    expect(p.holdings.map((h) => [h.symbol, h.balance, h.valueUsd])).toEqual([['ETH', '1', '3000.00'], ['USDC', '2.5', '2.50']])
    expect(p.totalValueUsd).toBe('3002.50')
  })
})
