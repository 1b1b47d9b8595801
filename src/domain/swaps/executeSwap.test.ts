import { describe, expect, it } from 'vitest'
import type { Address } from 'viem'
import { executeSwap, type ExecuteSwapDeps } from './executeSwap.ts'
import { quoteSwap, type QuoteSwapDeps } from './quoteSwap.ts'
import { readSwapRequest } from './swap.schema.ts'
import type { MarketAtBlock, SwapToken } from './ports.ts'

const weth = '0x00000000000000000000000000000000000000aa' as Address
const usdc = '0x00000000000000000000000000000000000000bb' as Address
const wallet = '0x00000000000000000000000000000000000000dd' as Address
const agentId = '11111111-1111-4111-8111-111111111111'
const tokens: Record<string, SwapToken> = {
  ETH: { address: weth, symbol: 'ETH', decimals: 18, verified: true, native: true },
  USDC: { address: usdc, symbol: 'USDC', decimals: 6, verified: true, native: false },
}
const route = { kind: 'amm' as const, path: [weth, usdc], hops: [] }
const at: MarketAtBlock = {
  findRoute: async () => ({ ...route, amountOut: 2_000_000_000n, amounts: [10n ** 18n, 2_000_000_000n], fees: [], priceImpactBps: 10 }) as never,
  priceRoute: async () => { throw new Error('no quote route in these tests') },
  prices: async () => ({ usd: async () => '500.00' }),
  blockTimestamp: async () => 1_000n,
}

/** Plain objects for every port: the use cases run with no database, chain or network. */
function fakePorts(funds: { eth: bigint; token: bigint }) {
  const started: unknown[] = []
  const saved: unknown[] = []
  const deps: ExecuteSwapDeps & QuoteSwapDeps = {
    agents: { forSwap: async (accountId, id) => (accountId === 'acc' && id === agentId ? { wallet, policy: {}, status: 'running' } : undefined) },
    tokens: { lookup: async (ref) => (tokens[ref] ? { token: tokens[ref] } : { error: 'Unknown token.' }), weth, usdc },
    market: { atLatestBlock: async () => at },
    simulator: {
      funds: async () => ({ ...funds, baseFeePerGas: 1n }),
      allowance: async () => ({ spender: null, allowance: 0n }),
      swapTx: () => ({ to: weth, data: '0x', value: 10n ** 18n }) as never,
      approveTx: () => { throw new Error('ETH needs no approval') },
      simulate: async () => [{ ok: true, gasUsed: 100_000n, data: '0x', reason: undefined }],
      sellBackWarnings: async () => [],
    },
    quotes: { save: async (id, q) => void saved.push({ id, q }), load: async () => { throw new Error('unused') } },
    operations: {
      spentTodayUsd: async () => '0.00',
      find: async () => undefined,
      start: async (p) => {
        started.push(p)
        return { id: p.opId, agentId: p.agentId, kind: 'swap', status: 'confirmed', txHash: '0x1', amountOutBaseUnits: '1990000000', error: null }
      },
      waitEnd: async () => undefined,
    },
    clock: { now: () => Date.parse('2026-01-01T00:00:00Z') },
    newId: () => 'q-1',
  }
  return { deps, started, saved }
}
const body = { agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '1', slippageBps: 50 }

describe('executeSwap and quoteSwap with plain-object ports', () => {
  it('quotes at the route price with the slippage minimum, stored for 30 s', async () => {
    const { deps, saved } = fakePorts({ eth: 2n * 10n ** 18n, token: 0n })
    const q = await quoteSwap(deps, readSwapRequest('acc', body))
    expect(q).toMatchObject({ quoteId: 'q-1', expiresAt: '2026-01-01T00:00:30.000Z', amountOut: '2000', minAmountOut: '1990', valueInUsd: '500.00' })
    expect(saved).toHaveLength(1)
  })

  it('executes a swap as one wallet operation with its plan and policy value', async () => {
    const { deps, started } = fakePorts({ eth: 2n * 10n ** 18n, token: 0n })
    const swap = await executeSwap(deps, { ...readSwapRequest('acc', body), operationId: 'op-1' })
    expect(swap).toMatchObject({ id: 'op-1', status: 'confirmed', amountOut: '1990', minAmountOut: '1990', expectedAmountOut: '2000' })
    expect(started).toEqual([expect.objectContaining({ opId: 'op-1', usdValue: '500.00', consumeQuoteId: undefined })])
  })

  it('refuses before starting anything when the wallet lacks the amount or the gas', async () => {
    const short = fakePorts({ eth: 10n ** 17n, token: 0n })
    await expect(executeSwap(short.deps, { ...readSwapRequest('acc', body), operationId: 'op-2' })).rejects.toMatchObject({
      code: 'insufficient_funds',
      message: 'The agent wallet holds 0.1 ETH; this swap needs 1.',
    })
    const noGas = fakePorts({ eth: 10n ** 18n, token: 0n })
    await expect(executeSwap(noGas.deps, { ...readSwapRequest('acc', body), operationId: 'op-3' })).rejects.toMatchObject({ code: 'insufficient_funds' })
    expect([...short.started, ...noGas.started]).toEqual([])
  })

  it('names every bad field at once, lookups included', async () => {
    const { deps } = fakePorts({ eth: 0n, token: 0n })
    await expect(
      executeSwap(deps, { ...readSwapRequest('other', { ...body, tokenOut: 'NOPE', slippageBps: 0 }), operationId: 'op-4' }),
    ).rejects.toMatchObject({ code: 'validation_failed', fieldErrors: { agentId: 'No such agent in this account.', tokenOut: 'Unknown token.', slippageBps: 'At least 1 bps.' } })
  })
})
