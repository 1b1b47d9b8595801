import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import { erc20Abi, type Address } from 'viem'
import { startTestApp, type Api, type TestApp } from './support/app.ts'

let app: TestApp
let api: Api
let apiKey: string

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  ;({ api, apiKey } = await app.account())
})
afterAll(async () => {
  await app?.close()
})

async function newAgent(eth: string) {
  const a = await api('POST', '/agents', { name: 'quoter', model: 'gpt-4o-mini', skills: [] })
  expect(a.status).toBe(201)
  expect((await api('POST', '/dev/faucet', { agentId: a.body.id, eth })).status).toBe(200)
  return a.body as { id: string; walletAddress: Address }
}

const usdcOf = (owner: Address) =>
  app.services.chain!.publicClient.readContract({ address: app.services.chain!.manifest.contracts.usdc, abi: erc20Abi, functionName: 'balanceOf', args: [owner] })

/** Swaps recorded for the agent, and the transactions its wallet sent. */
async function swapsOf(agentId: string) {
  const { rows } = await app.services.pool.query<{ ops: number; txs: number }>(
    `select (select count(*)::int from wallet_op where agent_id = $1 and kind = 'swap') as ops,
            (select count(*)::int from chain_tx where agent_id = $1) as txs`,
    [agentId],
  )
  return rows[0]!
}

describe('swap bodies', () => {
  it('fields named constructor, toString or __proto__ are unknown fields on /swap/quote and /swap/execute', async () => {
    const agent = await newAgent('1')
    for (const path of ['/swap/quote', '/swap/execute']) {
      for (const name of ['constructor', 'toString', '__proto__']) {
        const res = await fetch(`${app.url}/api/v1${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: `{"agentId":"${agent.id}","tokenIn":"ETH","tokenOut":"USDC","amountIn":"0.01",${JSON.stringify(name)}:1}`,
        })
        const body = (await res.json()) as { code?: string; field_errors?: object }
        expect({ path, name, status: res.status, code: body.code, field_errors: body.field_errors }).toEqual({
          path, name, status: 422, code: 'validation_failed', field_errors: { [name]: 'Unknown field.' },
        })
      }
    }
    const deep = await fetch(`${app.url}/api/v1/swap/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: `{"agentId":"${agent.id}","x":${'['.repeat(5000)}${']'.repeat(5000)}}`,
    })
    expect(deep.status).toBe(422)
    expect(((await deep.json()) as { field_errors?: object }).field_errors).toEqual({ body: 'Nested deeper than 32 levels.' })
    expect(await swapsOf(agent.id)).toEqual({ ops: 0, txs: 0 })
  })
})

describe('a quoteId executes once', () => {
  it('a second execute with the same quoteId is 409 quote_used, and the chain saw one swap', async () => {
    const agent = await newAgent('2')
    const body = { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1', slippageBps: 100 }
    const q = await api('POST', '/swap/quote', body)
    expect(q.status).toBe(200)
    const first = await api('POST', '/swap/execute', { ...body, quoteId: q.body.quoteId })
    expect(first.status).toBe(200)
    expect(first.body.status).toBe('confirmed')
    const afterFirst = await usdcOf(agent.walletAddress)
    expect(afterFirst).toBe(BigInt(first.body.amountOutBaseUnits))
    const again = await api('POST', '/swap/execute', { ...body, quoteId: q.body.quoteId })
    expect(again.status).toBe(409)
    expect(again.body.code).toBe('quote_used')
    expect(again.body.error).toContain(first.body.id)
    // With another Idempotency-Key too: the key names a request, the quote is spent.
    const keyed = await api('POST', '/swap/execute', { ...body, quoteId: q.body.quoteId }, { 'idempotency-key': randomUUID() })
    expect(keyed.status).toBe(409)
    expect(keyed.body.code).toBe('quote_used')
    expect(await swapsOf(agent.id)).toEqual({ ops: 1, txs: 1 })
    expect(await usdcOf(agent.walletAddress)).toBe(afterFirst)
    // A retry of the first request (same Idempotency-Key) is still answered with its swap.
    const key = randomUUID()
    const q2 = await api('POST', '/swap/quote', body)
    const x2 = await api('POST', '/swap/execute', { ...body, quoteId: q2.body.quoteId }, { 'idempotency-key': key })
    const retry = await api('POST', '/swap/execute', { ...body, quoteId: q2.body.quoteId }, { 'idempotency-key': key })
    expect([x2.status, retry.status, retry.body.id]).toEqual([200, 200, x2.body.id])
    expect(await swapsOf(agent.id)).toEqual({ ops: 2, txs: 2 })
  })

  it('two executes of one quote at once: exactly one swap on chain, the other 409 quote_used', async () => {
    const agent = await newAgent('2')
    const body = { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1', slippageBps: 100 }
    const q = await api('POST', '/swap/quote', body)
    const results = await Promise.all([
      api('POST', '/swap/execute', { ...body, quoteId: q.body.quoteId }),
      api('POST', '/swap/execute', { ...body, quoteId: q.body.quoteId }, { 'idempotency-key': randomUUID() }),
      api('POST', '/swap/execute', { ...body, quoteId: q.body.quoteId }, { 'idempotency-key': randomUUID() }),
    ])
    const statuses = results.map((r) => r.status).sort()
    expect(statuses).toEqual([200, 409, 409])
    expect(results.filter((r) => r.status === 409).map((r) => r.body.code)).toEqual(['quote_used', 'quote_used'])
    const winner = results.find((r) => r.status === 200)!
    expect(await swapsOf(agent.id)).toEqual({ ops: 1, txs: 1 })
    expect(await usdcOf(agent.walletAddress)).toBe(BigInt(winner.body.amountOutBaseUnits))
    const { rows } = await app.services.pool.query('select used_by from swap_quote where id = $1', [q.body.quoteId])
    expect(rows).toEqual([{ used_by: winner.body.id }])
  })

  it('an execute refused before its operation starts leaves the quote usable', async () => {
    const agent = await newAgent('0.02')
    const body = { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1', slippageBps: 100 }
    const q = await api('POST', '/swap/quote', body)
    expect(q.status).toBe(200)
    const poor = await api('POST', '/swap/execute', { ...body, quoteId: q.body.quoteId })
    expect(poor.status).toBe(422)
    expect(poor.body.code).toBe('insufficient_funds')
    expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '1' })).status).toBe(200)
    const rich = await api('POST', '/swap/execute', { ...body, quoteId: q.body.quoteId })
    expect(rich.status).toBe(200)
    expect(rich.body.quoteId).toBe(q.body.quoteId)
    expect(await swapsOf(agent.id)).toEqual({ ops: 1, txs: 1 })
  })
})
