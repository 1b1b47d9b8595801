import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import { erc20Abi, formatUnits, maxUint256, parseEther, parseUnits, type Address } from 'viem'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { AmmFactoryArtifact, AmmPairArtifact, AmmRouterArtifact, WETH9Artifact } from '../src/dev/artifacts/index.ts'
import { EMBEDDED_DEPLOYER_KEY, walletClientFor } from '../src/adapters/chain/chain.ts'

let app: TestApp
let api: Api
let other: Api
let m: NonNullable<TestApp['services']['chain']>['manifest']

const key = () => `k-${Math.random().toString(36).slice(2)}`
const client = () => app.services.chain!.publicClient
const tsla = () => m.stocks.find((s) => s.symbol === 'TSLAx')!

async function newAgent(eth = '50', usdc = '20000') {
  const a = await api('POST', '/agents', { name: 'swapper', model: 'gpt-4o-mini', skills: [] })
  expect(a.status).toBe(201)
  expect((await api('POST', '/dev/faucet', { agentId: a.body.id, eth, usdc })).status).toBe(200)
  // The default caps ($1,000 a trade) would refuse the larger test swaps; the policy test sets its own.
  await api('PATCH', `/agents/${a.body.id}`, { policy: { max_trade_usd: '1000000', max_daily_usd: '10000000' } })
  return a.body as { id: string; walletAddress: Address }
}

const balance = (token: Address, owner: Address) =>
  client().readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] })

/** Uniswap-V2 output of a plain pool (no virtual reserve, no hook), from its live reserves. */
async function poolOut(pair: Address, tokenIn: Address, amountIn: bigint) {
  const [token0, [r0, r1]] = await Promise.all([
    client().readContract({ address: pair, abi: AmmPairArtifact.abi, functionName: 'token0' }),
    client().readContract({ address: pair, abi: AmmPairArtifact.abi, functionName: 'getReserves' }),
  ])
  const [x, y] = token0.toLowerCase() === tokenIn.toLowerCase() ? [r0, r1] : [r1, r0]
  return (amountIn * 997n * y) / (x * 1000n + amountIn * 997n)
}

/** ETH spent on gas by an agent's transactions from `fromNonce` on. */
async function gasSpent(agentId: string, fromNonce = 0) {
  const { rows } = await app.services.pool.query(`select hash from chain_tx where agent_id = $1 and nonce >= $2 and status = 'confirmed'`, [agentId, fromNonce])
  let total = 0n
  for (const r of rows) {
    const receipt = await client().getTransactionReceipt({ hash: r.hash })
    total += receipt.gasUsed * receipt.effectiveGasPrice
  }
  return total
}

const txCount = async (agentId: string) =>
  (await app.services.pool.query(`select count(*)::int as n from chain_tx where agent_id = $1`, [agentId])).rows[0].n as number

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  api = (await app.account()).api
  other = (await app.account({ name: 'other' })).api
  m = app.services.chain!.manifest
})
afterAll(async () => {
  await app?.close()
})

describe('quotes and swaps on the reference pools', () => {
  it('ETH -> USDC, USDC -> TSLAx and TSLAx -> ETH (two hops) quote the pool math and execute with the balances moving on chain', async () => {
    const agent = await newAgent()
    const weth = m.contracts.weth
    const usdc = m.contracts.usdc

    // ETH -> USDC: one hop on the WETH/USDC pool.
    const q1 = await api('POST', '/swap/quote', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '1', slippageBps: 50 })
    expect(q1.status).toBe(200)
    const out1 = await poolOut(m.contracts.wethUsdcPair, weth, parseEther('1'))
    expect(q1.body).toMatchObject({
      quoteId: expect.any(String),
      tokenIn: { symbol: 'ETH', native: true, verified: true, decimals: 18 },
      tokenOut: { symbol: 'USDC', verified: true, decimals: 6, address: usdc.toLowerCase() },
      amountIn: '1',
      amountOut: formatUnits(out1, 6),
      minAmountOut: formatUnits((out1 * 9950n) / 10000n, 6),
      route: [{ venue: 'amm', address: m.contracts.wethUsdcPair.toLowerCase(), tokenIn: { symbol: 'WETH' }, tokenOut: { symbol: 'USDC' }, feeBps: 30 }],
      warnings: [],
    })
    expect(Number(q1.body.valueInUsd)).toBeGreaterThan(2900)
    expect(Number(q1.body.valueInUsd)).toBeLessThan(3100)
    expect(q1.body.priceImpactBps).toBeGreaterThan(90) // 1 ETH into a 100 ETH pool: about 1%
    expect(q1.body.priceImpactBps).toBeLessThan(110)
    expect(Date.parse(q1.body.expiresAt) - Date.now()).toBeLessThanOrEqual(30_000)

    const usdcBefore = await balance(usdc, agent.walletAddress)
    const ethBefore = await client().getBalance({ address: agent.walletAddress })
    const x1 = await api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '1', slippageBps: 50, quoteId: q1.body.quoteId })
    expect(x1.status).toBe(200)
    expect(x1.body).toMatchObject({ status: 'confirmed', amountIn: '1', amountOut: formatUnits(out1, 6), txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), error: null })
    expect(BigInt(x1.body.gasUsed)).toBeGreaterThan(21_000n)
    expect((await balance(usdc, agent.walletAddress)) - usdcBefore).toBe(out1)
    expect(ethBefore - (await client().getBalance({ address: agent.walletAddress }))).toBe(parseEther('1') + (await gasSpent(agent.id)))

    // USDC -> TSLAx: the stock's USDC pool, after an approval in the same operation.
    const q2 = await api('POST', '/swap/quote', { agentId: agent.id, tokenIn: 'USDC', tokenOut: 'TSLAx', amountIn: '1000', slippageBps: 100 })
    const out2 = await poolOut(tsla().pair, usdc, 1000_000000n)
    expect(q2.body).toMatchObject({ amountOut: formatUnits(out2, 18), route: [{ venue: 'amm', address: tsla().pair.toLowerCase() }] })
    expect(Number(q2.body.amountOut)).toBeGreaterThan(2.5) // ~ $1000 / $350
    const tslaBefore = await balance(tsla().address, agent.walletAddress)
    const x2 = await api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'USDC', tokenOut: 'TSLAx', amountIn: '1000', slippageBps: 100 })
    expect(x2.body).toMatchObject({ status: 'confirmed', amountOut: formatUnits(out2, 18) })
    expect((await balance(tsla().address, agent.walletAddress)) - tslaBefore).toBe(out2)
    const { rows: kinds } = await app.services.pool.query(`select kind, nonce from chain_tx where agent_id = $1 order by nonce`, [agent.id])
    expect(kinds.map((r) => r.kind)).toEqual(['swap', 'swap.approve', 'swap'])

    // TSLAx -> ETH: no direct pool; TSLAx -> USDC -> WETH, unwrapped to ETH.
    const amount = parseUnits('1.5', 18)
    const q3 = await api('POST', '/swap/quote', { agentId: agent.id, tokenIn: 'TSLAx', tokenOut: 'ETH', amountIn: '1.5', slippageBps: 100 })
    const mid = await poolOut(tsla().pair, tsla().address, amount)
    const out3 = await poolOut(m.contracts.wethUsdcPair, usdc, mid)
    expect(q3.body.route.map((h: { tokenIn: { symbol: string }; tokenOut: { symbol: string } }) => `${h.tokenIn.symbol}>${h.tokenOut.symbol}`)).toEqual([
      'TSLAx>USDC',
      'USDC>WETH',
    ])
    expect(q3.body.route[0].amountOut).toBe(formatUnits(mid, 6))
    expect(q3.body.amountOut).toBe(formatUnits(out3, 18))
    expect(q3.body.fees).toHaveLength(2)
    const nonce = await client().getTransactionCount({ address: agent.walletAddress })
    const ethBefore3 = await client().getBalance({ address: agent.walletAddress })
    const x3 = await api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'TSLAx', tokenOut: 'ETH', amountIn: '1.5', slippageBps: 100, quoteId: q3.body.quoteId })
    expect(x3.body).toMatchObject({ status: 'confirmed', amountOut: formatUnits(out3, 18), route: [{ venue: 'amm' }, { venue: 'amm' }] })
    const gas = await gasSpent(agent.id, nonce)
    expect((await client().getBalance({ address: agent.walletAddress })) - ethBefore3).toBe(out3 - gas)
    expect(tslaBefore + out2 - (await balance(tsla().address, agent.walletAddress))).toBe(amount)

    // Polling the swap, and nobody else's.
    expect((await api('GET', `/swap/${x3.body.id}`)).body).toMatchObject({ id: x3.body.id, status: 'confirmed', amountOut: x3.body.amountOut })
    expect((await other('GET', `/swap/${x3.body.id}`)).status).toBe(404)
  })

  it('a venue-a token on its curve: unverified needs acknowledgeUnverified (nothing sent without), then buys and sells on the curve', async () => {
    const creator = await newAgent('5', '0')
    const launch = await api('POST', '/launch/venue-a', { agentId: creator.id, symbol: 'MEOW', name: 'Meow', quote: 'ETH' }, { 'idempotency-key': key() })
    let live = launch.body
    for (const until = Date.now() + 20_000; live.status !== 'live' && live.status !== 'failed' && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 50))
      live = (await api('GET', `/launch/${launch.body.id}`)).body
    }
    expect(live.status).toBe('live')
    const token = live.tokenAddress as Address
    const agent = await newAgent('10', '1000')
    const body = { agentId: agent.id, tokenIn: 'ETH', tokenOut: token, amountIn: '0.2', slippageBps: 200 }

    const q = await api('POST', '/swap/quote', body)
    expect(q.status).toBe(200)
    expect(q.body).toMatchObject({ tokenOut: { address: token.toLowerCase(), symbol: 'MEOW', verified: false }, route: [{ venue: 'venue-a', address: m.contracts.venueA.toLowerCase() }] })
    // 0.2 ETH into a 1.5 ETH virtual reserve moves the price a lot; the sell-back simulation found nothing wrong.
    expect(q.body.warnings.map((w: { code: string }) => w.code)).toEqual(['unverified_token', 'high_price_impact'])
    // Curve math: 1% fee, then T * net / (V + R + net) with V = 1.5 ETH, R = 0, T = 1e27.
    const net = parseEther('0.2') - parseEther('0.002')
    expect(q.body.amountOut).toBe(formatUnits((10n ** 27n * net) / (parseEther('1.5') + net), 18))

    const refused = await api('POST', '/swap/execute', body)
    expect(refused.status).toBe(422)
    expect(refused.body.code).toBe('unverified_token')
    expect(await txCount(agent.id)).toBe(0)

    // An operator's word verifies a launched token (and can be withdrawn); other accounts cannot.
    const op = await app.account({ operator: true, name: 'op' })
    expect((await api('POST', `/ops/tokens/${token}/verified`, { verified: true })).status).toBe(403)
    expect((await op.api('POST', `/ops/tokens/${token}/verified`, { verified: true })).body).toMatchObject({ verified: true, symbol: 'MEOW' })
    const vouched = await api('POST', '/swap/quote', body)
    expect(vouched.body.tokenOut.verified).toBe(true)
    expect(vouched.body.warnings.map((w: { code: string }) => w.code)).not.toContain('unverified_token')
    await op.api('POST', `/ops/tokens/${token}/verified`, { verified: false })
    const { rows: audit } = await app.services.pool.query(`select action from audit_log where subject_id = $1 order by id`, [token.toLowerCase()])
    expect(audit.map((r) => r.action)).toEqual(['token.verify', 'token.unverify'])

    const bought = await api('POST', '/swap/execute', { ...body, acknowledgeUnverified: true, quoteId: q.body.quoteId })
    expect(bought.body).toMatchObject({ status: 'confirmed', amountOut: q.body.amountOut, route: [{ venue: 'venue-a' }] })
    const held = await balance(token, agent.walletAddress)
    expect(formatUnits(held, 18)).toBe(q.body.amountOut)

    // Mixing the curve with a pool is refused, not half-done.
    const mixed = await api('POST', '/swap/quote', { agentId: agent.id, tokenIn: token, tokenOut: 'USDC', amountIn: '1000', slippageBps: 100 })
    expect(mixed.status).toBe(422)
    expect(mixed.body.code).toBe('no_route')

    // Selling half back for ETH (sellForETH after an approval).
    const half = formatUnits(held / 2n, 18)
    const ethBefore = await client().getBalance({ address: agent.walletAddress })
    const nonce = await client().getTransactionCount({ address: agent.walletAddress })
    const sold = await api('POST', '/swap/execute', { agentId: agent.id, tokenIn: token, tokenOut: 'ETH', amountIn: half, slippageBps: 200, acknowledgeUnverified: true })
    expect(sold.body).toMatchObject({ status: 'confirmed', route: [{ venue: 'venue-a' }] })
    const got = parseEther(sold.body.amountOut)
    expect(got).toBeGreaterThan(parseEther('0.09'))
    expect((await client().getBalance({ address: agent.walletAddress })) - ethBefore).toBe(got - (await gasSpent(agent.id, nonce)))
  })

  it('a venue-b token quoted in USDC is bought with ETH through WETH -> USDC -> token, its 1% fee hook included', async () => {
    const launch = await api('POST', '/launch/venue-b', { agentId: (await newAgent('2', '0')).id, symbol: 'HOOK', name: 'Hook', quote: 'USDC' }, { 'idempotency-key': key() })
    let live = launch.body
    for (const until = Date.now() + 20_000; live.status !== 'live' && live.status !== 'failed' && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 50))
      live = (await api('GET', `/launch/${launch.body.id}`)).body
    }
    const token = live.tokenAddress as Address
    const agent = await newAgent('5', '0')
    const body = { agentId: agent.id, tokenIn: 'ETH', tokenOut: token, amountIn: '0.05', slippageBps: 100, acknowledgeUnverified: true }
    const q = await api('POST', '/swap/quote', body)
    expect(q.body.route.map((h: { venue: string; feeBps: number }) => [h.venue, h.feeBps])).toEqual([['amm', 30], ['amm', 130]])
    expect(q.body.warnings.map((w: { code: string }) => w.code)).toEqual(['unverified_token'])
    const x = await api('POST', '/swap/execute', { ...body, quoteId: q.body.quoteId })
    expect(x.body).toMatchObject({ status: 'confirmed', amountOut: q.body.amountOut })
    expect(formatUnits(await balance(token, agent.walletAddress), 18)).toBe(q.body.amountOut)
  })

  it('a token that taxes buys and blocks sells gets transfer-tax and sell-back warnings', async () => {
    const source = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;
contract Trap {
    string public name = "Trap"; string public symbol = "TRAP"; uint8 public decimals = 18;
    uint256 public totalSupply; address public owner = msg.sender; address public pair;
    mapping(address => uint256) public balanceOf; mapping(address => mapping(address => uint256)) public allowance;
    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    constructor() { totalSupply = 1e24; balanceOf[msg.sender] = 1e24; }
    function setPair(address p) external { require(msg.sender == owner); pair = p; }
    function approve(address s, uint256 a) external returns (bool) { allowance[msg.sender][s] = a; emit Approval(msg.sender, s, a); return true; }
    function transfer(address to, uint256 a) external returns (bool) { _move(msg.sender, to, a); return true; }
    function transferFrom(address f, address to, uint256 a) external returns (bool) {
        if (allowance[f][msg.sender] != type(uint256).max) allowance[f][msg.sender] -= a;
        _move(f, to, a); return true;
    }
    function _move(address f, address to, uint256 a) private {
        require(to != pair || f == owner || pair == address(0), "Trap: no selling");
        uint256 tax = f == pair ? a / 10 : 0;
        balanceOf[f] -= a; balanceOf[to] += a - tax; totalSupply -= tax;
        emit Transfer(f, to, a - tax);
    }
}`
    const solc = createRequire(import.meta.url)('solc')
    const compiled = JSON.parse(solc.compile(JSON.stringify({
      language: 'Solidity',
      sources: { 'Trap.sol': { content: source } },
      settings: { evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
    })))
    const { abi, evm } = compiled.contracts['Trap.sol'].Trap
    const chain = app.services.chain!
    const deployer = walletClientFor(chain, EMBEDDED_DEPLOYER_KEY)
    const mined = async (hash: Promise<`0x${string}`>) => expect((await client().waitForTransactionReceipt({ hash: await hash, pollingInterval: 50 })).status).toBe('success')
    const deployed = await client().waitForTransactionReceipt({ hash: await deployer.deployContract({ abi, bytecode: `0x${evm.bytecode.object}` }), pollingInterval: 50 })
    const trap = deployed.contractAddress!
    await mined(deployer.writeContract({ address: m.contracts.weth, abi: WETH9Artifact.abi, functionName: 'deposit', value: parseEther('10') }))
    for (const token of [trap, m.contracts.weth]) {
      await mined(deployer.writeContract({ address: token, abi: erc20Abi, functionName: 'approve', args: [m.contracts.router, maxUint256] }))
    }
    await mined(deployer.writeContract({
      address: m.contracts.router, abi: AmmRouterArtifact.abi, functionName: 'addLiquidity',
      args: [trap, m.contracts.weth, parseEther('100000'), parseEther('10'), 0n, 0n, deployer.account.address, 2n ** 40n],
    }))
    const pair = await client().readContract({ address: m.contracts.factory, abi: AmmFactoryArtifact.abi, functionName: 'getPair', args: [trap, m.contracts.weth] })
    await mined(deployer.writeContract({ address: trap, abi, functionName: 'setPair', args: [pair] }))

    const agent = await newAgent('0', '0') // no ETH: the check lends the wallet ETH in the simulation
    const q = await api('POST', '/swap/quote', { agentId: agent.id, tokenIn: 'ETH', tokenOut: trap, amountIn: '0.1', slippageBps: 100 })
    expect(q.status).toBe(200)
    expect(q.body.tokenOut).toMatchObject({ symbol: 'TRAP', verified: false })
    expect(q.body.warnings.map((w: { code: string }) => w.code)).toEqual(['unverified_token', 'transfer_tax', 'sell_back_reverts'])
    expect(q.body.warnings[2].message).toContain('Trap: no selling')
  })

  it('slippage: when another wallet moves the price after the quote, executing the quote is refused and nothing moves', async () => {
    const agent = await newAgent()
    const whale = await newAgent('100', '0')
    const q = await api('POST', '/swap/quote', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.5', slippageBps: 30 })
    const moved = await api('POST', '/swap/execute', { agentId: whale.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '10', slippageBps: 5000 })
    expect(moved.body.status).toBe('confirmed')
    const [eth, usdc] = [await client().getBalance({ address: agent.walletAddress }), await balance(m.contracts.usdc, agent.walletAddress)]
    const res = await api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.5', slippageBps: 30, quoteId: q.body.quoteId })
    expect(res.status).toBe(422)
    expect(res.body.code).toBe('slippage_exceeded')
    expect(res.body.error).toMatch(/less than minAmountOut/)
    expect(await client().getBalance({ address: agent.walletAddress })).toBe(eth)
    expect(await balance(m.contracts.usdc, agent.walletAddress)).toBe(usdc)
    expect(await txCount(agent.id)).toBe(0)
    // Without the quote, the same request is priced afresh and goes through.
    const fresh = await api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.5', slippageBps: 30 })
    expect(fresh.body.status).toBe('confirmed')
  })
})

describe('validation', () => {
  it('names every bad field at once; quotes expire and must match', async () => {
    const agent = await newAgent('1', '10')
    const bad = await api('POST', '/swap/quote', { agentId: 'nope', tokenIn: '', tokenOut: 'NOSUCH', amountIn: '0', slippageBps: 0, acknowledgeUnverified: 'yes', extra: 1 })
    expect(bad.status).toBe(422)
    expect(Object.keys(bad.body.field_errors).sort()).toEqual(['acknowledgeUnverified', 'agentId', 'amountIn', 'extra', 'slippageBps', 'tokenIn', 'tokenOut'])
    const bad2 = await api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'USDC', tokenOut: 'usdc', amountIn: '1.1234567', slippageBps: 1.5 })
    expect(Object.keys(bad2.body.field_errors).sort()).toEqual(['amountIn', 'slippageBps', 'tokenOut'])
    const bad3 = await api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: '0x000000000000000000000000000000000000dEaD', amountIn: 1, slippageBps: 5001, quoteId: 'x' })
    expect(Object.keys(bad3.body.field_errors).sort()).toEqual(['amountIn', 'quoteId', 'slippageBps', 'tokenOut'])
    const theirs = await other('POST', '/swap/quote', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1' })
    expect(theirs.body.field_errors).toEqual({ agentId: 'No such agent in this account.' })
    const withId = await api('POST', '/swap/quote', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1', quoteId: crypto.randomUUID() })
    expect(Object.keys(withId.body.field_errors)).toEqual(['quoteId'])

    const body = { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1', slippageBps: 100 }
    const unknown = await api('POST', '/swap/execute', { ...body, quoteId: crypto.randomUUID() })
    expect(unknown.body.code).toBe('quote_expired')
    const q = await api('POST', '/swap/quote', body)
    const mismatch = await api('POST', '/swap/execute', { ...body, amountIn: '0.2', quoteId: q.body.quoteId })
    expect(mismatch.status).toBe(422)
    expect(mismatch.body.code).toBe('quote_mismatch')
    // Quotes live in Postgres for 30 seconds; another account cannot use one, an expired one is refused.
    const { rows: stored } = await app.services.pool.query('select expires_at - now() as ttl from swap_quote where id = $1', [q.body.quoteId])
    expect(stored).toHaveLength(1)
    expect((await other('POST', '/swap/execute', { ...body, quoteId: q.body.quoteId })).status).toBe(422)
    await app.services.pool.query(`update swap_quote set expires_at = now() - interval '1 second' where id = $1`, [q.body.quoteId])
    const expired = await api('POST', '/swap/execute', { ...body, quoteId: q.body.quoteId })
    expect(expired.body.code).toBe('quote_expired')
    const tooMuch = await api('POST', '/swap/execute', { ...body, amountIn: '5' })
    expect(tooMuch.body.code).toBe('insufficient_funds')
    expect(await txCount(agent.id)).toBe(0)
  })

  it('Idempotency-Key: a replay answers the same swap without a second transaction', async () => {
    const agent = await newAgent('2', '0')
    const body = { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.05', slippageBps: 100 }
    const k = key()
    const first = await api('POST', '/swap/execute', body, { 'idempotency-key': k })
    const again = await api('POST', '/swap/execute', body, { 'idempotency-key': k })
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body.id).toBe(first.body.id)
    expect(await txCount(agent.id)).toBe(1)
    // The stored answer lost (a crash after the swap, before the answer was kept): the same
    // body finds the swap made; another body under the key is refused.
    await app.services.pool.query(`delete from idempotency_key where key = $1`, [k])
    const other = await api('POST', '/swap/execute', { ...body, amountIn: '0.06' }, { 'idempotency-key': k })
    expect(other.status).toBe(422)
    expect(other.body.code).toBe('idempotency_key_reused')
    const same = await api('POST', '/swap/execute', body, { 'idempotency-key': k })
    expect(same.body).toMatchObject({ id: first.body.id, txHash: first.body.txHash })
    expect(await txCount(agent.id)).toBe(1)
  })
})

describe('policy', () => {
  it('each rule refuses what it should and lets through what it should', async () => {
    const agent = await newAgent('20', '0')
    const swap = (amountIn: string, tokenOut = 'USDC') =>
      api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut, amountIn, slippageBps: 300 })
    const policy = (p: object) => api('PATCH', `/agents/${agent.id}`, { policy: p }).then((r) => expect(r.status).toBe(200))
    const refused = async (res: Awaited<ReturnType<typeof swap>>, rule: string) => {
      expect(res.status).toBe(403)
      expect(res.body.code).toBe('policy_violation')
      expect(res.body.error).toContain(`"${rule}"`)
    }
    const passed = (res: Awaited<ReturnType<typeof swap>>) => expect(res.body.status).toBe('confirmed')

    await policy({ max_trade_usd: '100' })
    await refused(await swap('0.05'), 'max_trade_usd') // ~$150
    passed(await swap('0.02')) // ~$60
    await policy({ max_trade_usd: '1000', max_daily_usd: '80' })
    await refused(await swap('0.02'), 'max_daily_usd') // twice ~$50-60 > $80
    await policy({ max_daily_usd: '1000' })
    passed(await swap('0.02'))
    await policy({ max_trade_usd: '100000', max_daily_usd: '100000', max_price_impact_bps: 50 })
    await refused(await swap('2'), 'max_price_impact_bps') // ~2% of the pool
    passed(await swap('0.02'))
    await policy({ allow_tokens: ['ETH'] })
    await refused(await swap('0.02'), 'allow_tokens')
    await policy({ allow_tokens: ['ETH', 'usdc'] })
    passed(await swap('0.02'))
    await policy({ allow_tokens: [], deny_tokens: [m.contracts.usdc] })
    await refused(await swap('0.02'), 'deny_tokens')
    await policy({ deny_tokens: ['TSLAx'] })
    passed(await swap('0.02'))
    await policy({ paused: true })
    await refused(await swap('0.02'), 'paused')
    await policy({ paused: false })
    passed(await swap('0.02'))
    expect(await txCount(agent.id)).toBe(6)
  })
})

describe('concurrency', () => {
  it('20 concurrent swaps from one wallet are 20 transactions with contiguous nonces', async () => {
    const agent = await newAgent('20', '0')
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', slippageBps: 500 }),
      ),
    )
    expect(results.map((r) => r.body.status)).toEqual(Array(20).fill('confirmed'))
    const { rows } = await app.services.pool.query(`select nonce, status from chain_tx where agent_id = $1 order by nonce`, [agent.id])
    expect(rows.map((r) => Number(r.nonce))).toEqual(Array.from({ length: 20 }, (_, i) => i))
    expect(rows.every((r) => r.status === 'confirmed')).toBe(true)
    expect(await client().getTransactionCount({ address: agent.walletAddress })).toBe(20)
  })
})
