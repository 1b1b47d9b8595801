import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWalletClient, http, parseEther, parseUnits, type Address, type Hex, type WalletClient } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startTestApp, type Api, type TestApp, waitForLaunchEnd } from './support/app.ts'
import { AmmRouterArtifact, BondingCurveLaunchpadArtifact, MockUSDCArtifact } from '../src/dev/artifacts/index.ts'
import { EMBEDDED_DEPLOYER_KEY, walletClientFor, type ChainHandle } from '../src/adapters/chain/chain.ts'
import { loadOrCreateMasterKey } from '../src/adapters/chain/keystore.ts'
import { loadAgentAccount } from '../src/adapters/chain/agentWallet.ts'
import type { Indexer } from '../src/adapters/chain/indexer.ts'

let app: TestApp
let api: Api
let chain: ChainHandle
let indexer: Indexer
let agentId: string
let agentWallet: Address
let outsider: WalletClient
let outsiderAddress: Address
const tokens: Record<'curve' | 'pool' | 'self', Address> = {} as never
/** A venue-a token created by the outsider. */
let stranger: string

const key = () => `k-${Math.random().toString(36).slice(2)}`
const deadline = () => BigInt(Math.floor(Date.now() / 1000) + 600)

const waitLive = (id: string) => waitForLaunchEnd(api, id)

async function launch(venue: string, body: object) {
  const res = await api('POST', `/launch/${venue}`, { agentId, ...body }, { 'idempotency-key': key() })
  expect(res.status).toBe(202)
  const live = await waitLive(res.body.id)
  expect(live.status).toBe('live')
  return live as { id: string; tokenAddress: Address; poolAddress: Address | null; txHash: Hex }
}

/** Sends from a wallet and waits for a successful receipt. */
async function mined(hash: Hex) {
  const r = await chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  expect(r.status).toBe('success')
  return r
}

async function curveBuy(wallet: WalletClient, token: Address, eth: string) {
  return mined(
    await wallet.writeContract({
      chain: chain.chain, account: wallet.account!, address: chain.manifest.contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi,
      functionName: 'buy', args: [token, parseEther(eth), 0n, wallet.account!.address], value: parseEther(eth),
    }),
  )
}

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  chain = app.services.chain!
  indexer = app.services.indexer!
  api = (await app.account()).api
  const a = await api('POST', '/agents', { name: 'indexed', model: 'gpt-4o-mini', skills: ['token-launch'] })
  agentId = a.body.id
  agentWallet = a.body.walletAddress
  expect((await api('POST', '/dev/faucet', { agentId, eth: '20', usdc: '20000' })).status).toBe(200)

  // A wallet that is none of ours, with ETH and USDC.
  const outsiderKey = generatePrivateKey()
  outsiderAddress = privateKeyToAccount(outsiderKey).address
  outsider = walletClientFor(chain, outsiderKey)
  await chain.publicClient.request({ method: 'anvil_setBalance' as never, params: [outsiderAddress, '0x3635C9ADC5DEA00000'] as never })
  const deployer = walletClientFor(chain, EMBEDDED_DEPLOYER_KEY)
  await mined(await deployer.writeContract({ address: chain.manifest.contracts.usdc, abi: MockUSDCArtifact.abi, functionName: 'mint', args: [outsiderAddress, parseUnits('5000', 6)] }))

  const [curve, pool, self] = await Promise.all([
    launch('venue-a', { symbol: 'CURVE', name: 'Curve Cat', quote: 'ETH', description: 'meow' }),
    launch('venue-b', { symbol: 'POOL', name: 'Pool Dog', quote: 'USDC' }),
    launch('self-funded', { symbol: 'SELF', name: 'Self Made', quote: 'ETH' }),
  ])
  tokens.curve = curve.tokenAddress
  tokens.pool = pool.tokenAddress
  tokens.self = self.tokenAddress
})
afterAll(async () => {
  await app?.close()
})

describe('the indexer fills the board', () => {
  it('launches on all three venues appear with venue, creator, quote and prices', async () => {
    // A token launched directly on venue-a by a wallet that is not ours.
    const { request, result } = await chain.publicClient.simulateContract({
      account: outsider.account!, address: chain.manifest.contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi,
      functionName: 'createToken', args: ['Stranger', 'STRNG', chain.manifest.contracts.weth],
    })
    stranger = result.toLowerCase()
    await mined(await outsider.writeContract({ ...request, account: outsider.account! }))

    const res = await indexer.syncOnce()
    expect(res.checkpoint).toBe(res.head)
    const board = await api('GET', '/tokens?limit=100')
    expect(board.status).toBe(200)
    const bySymbol = Object.fromEntries(board.body.tokens.map((t: { symbol: string }) => [t.symbol, t]))
    expect(bySymbol.CURVE).toMatchObject({
      address: tokens.curve, venue: 'venue-a', quote: 'ETH', creatorAgent: { id: agentId }, creatorAddress: agentWallet,
      graduated: false, verified: false,
      // 1.5 ETH virtual reserve over 1e9 tokens at 3,000 USD per ETH.
      priceUsd: '0.0000045', marketCapUsd: '4500.00', volume24hUsd: '0.00',
    })
    expect(bySymbol.POOL).toMatchObject({ address: tokens.pool, venue: 'venue-b', quote: 'USDC', creatorAgent: { id: agentId }, verified: false, marketCapUsd: '15000.00' })
    expect(bySymbol.SELF).toMatchObject({ address: tokens.self, venue: 'self-funded', quote: 'ETH', creatorAgent: { id: agentId }, verified: false })
    expect(bySymbol.SELF.priceUsd).toMatch(/^\d+\.\d+$/)
    expect(bySymbol.STRNG).toMatchObject({ address: stranger, venue: 'venue-a', quote: 'ETH', creatorAgent: null, creatorAddress: outsiderAddress.toLowerCase(), verified: false })
    // Newest first.
    const blocks = board.body.tokens.map((t: { blockNumber: number }) => t.blockNumber)
    expect(blocks).toEqual([...blocks].sort((a, b) => b - a))
    // Our launch's metadata survived the indexer's upsert.
    const detail = await api('GET', `/tokens/${tokens.curve}`)
    expect(detail.body).toMatchObject({ description: 'meow', indexed: true, curve: { progressPercent: '0.00', graduationThreshold: '4000000000000000000' } })
    // Paging.
    const p1 = await api('GET', '/tokens?limit=2')
    const p2 = await api('GET', `/tokens?limit=2&cursor=${p1.body.nextCursor}`)
    expect(p2.body.tokens[0].address).toBe(board.body.tokens[2].address)
  })

  it('curve and pool trades are indexed with side, amounts, fees and ours', async () => {
    await curveBuy(outsider, tokens.curve, '0.1')
    const masterKey = await loadOrCreateMasterKey({ dataDir: app.services.config.dataDir, logger: { warn() {} } })
    const agent = createWalletClient({ chain: chain.chain, transport: http(chain.rpcUrl), account: await loadAgentAccount(app.services.pool, masterKey, agentId) })
    await curveBuy(agent, tokens.curve, '0.2')
    // venue-b pool: the outsider buys POOL with 100 USDC through the router (1% fee hook).
    const router = chain.manifest.contracts.router
    await mined(await outsider.writeContract({ chain: chain.chain, account: outsider.account!, address: chain.manifest.contracts.usdc, abi: MockUSDCArtifact.abi, functionName: 'approve', args: [router, parseUnits('100', 6)] }))
    await mined(await outsider.writeContract({
      chain: chain.chain, account: outsider.account!, address: router, abi: AmmRouterArtifact.abi, functionName: 'swapExactTokensForTokens',
      args: [parseUnits('100', 6), 0n, [chain.manifest.contracts.usdc, tokens.pool], outsiderAddress, deadline()],
    }))
    await indexer.syncOnce()

    const all = await api('GET', `/tokens/${tokens.curve}/trades`)
    expect(all.status).toBe(200)
    expect(all.body.trades).toHaveLength(2)
    const [mine, theirs] = all.body.trades
    expect(theirs).toMatchObject({ trader: outsiderAddress.toLowerCase(), ours: false, side: 'buy', source: 'curve', quoteAmount: '100000000000000000', creatorFee: '500000000000000', platformFee: '500000000000000', quoteAmountUsd: '300.00' })
    expect(mine).toMatchObject({ trader: agentWallet, ours: true, agentId, side: 'buy', quoteAmount: '200000000000000000' })
    expect(BigInt(theirs.tokenAmount)).toBeGreaterThan(0n)
    const ours = await api('GET', `/tokens/${tokens.curve}/trades?ours=true`)
    expect(ours.body.trades.map((t: { ours: boolean }) => t.ours)).toEqual([true])
    const notOurs = await api('GET', `/tokens/${tokens.curve}/trades?ours=false&limit=1`)
    expect(notOurs.body.trades).toHaveLength(1)
    expect(notOurs.body.trades[0].ours).toBe(false)
    const bad = await api('GET', `/tokens/${tokens.curve}/trades?ours=yes`)
    expect(bad.status).toBe(422)
    expect(bad.body.field_errors).toHaveProperty('ours')
    const page = await api('GET', `/tokens/${tokens.curve}/trades?limit=1`)
    const next = await api('GET', `/tokens/${tokens.curve}/trades?limit=1&cursor=${page.body.nextCursor}`)
    expect(next.body.trades[0].txHash).toBe(theirs.txHash)
    expect(next.body.nextCursor).toBeNull()

    const detail = await api('GET', `/tokens/${tokens.curve}`)
    expect(detail.body).toMatchObject({
      market: { source: 'chain', phase: 'curve' },
      creatorFees: { earned: { quote: '1500000000000000', token: '0' }, claimed: { quote: '0' } },
      volume24hUsd: '900.00',
    })
    // 0.297 ETH net in the curve of a 4 ETH threshold.
    expect(detail.body.curve.progressPercent).toBe('7.42')
    expect(detail.body.market.quoteReserve).toBe('297000000000000000')
    const { rows } = await app.services.pool.query(`select quote_reserve, token_reserve from token_snapshot where token_address = $1 order by block_number desc, log_index desc limit 1`, [tokens.curve])
    expect(rows[0].quote_reserve).toBe(detail.body.market.quoteReserve)
    expect(rows[0].token_reserve).toBe(detail.body.market.tokenReserve)

    const poolTrades = await api('GET', `/tokens/${tokens.pool}/trades`)
    expect(poolTrades.body.trades).toHaveLength(1)
    expect(poolTrades.body.trades[0]).toMatchObject({
      trader: outsiderAddress.toLowerCase(), ours: false, side: 'buy', source: 'pool', quoteAmount: '100000000',
      creatorFee: '500000', platformFee: '500000', feeAsset: 'quote',
    })
    const poolDetail = await api('GET', `/tokens/${tokens.pool}`)
    expect(poolDetail.body).toMatchObject({ market: { phase: 'pool' }, creatorFees: { earned: { quote: '500000' } }, volume24hUsd: '100.00', curve: null })
    expect(Number(poolDetail.body.marketCapUsd)).toBeGreaterThan(15000)
  })
})

describe('graduation', () => {
  it('a curve that reaches its threshold graduates to its pool at the same price; pool swaps are indexed', async () => {
    const r = await curveBuy(outsider, stranger as Address, '4.1')
    expect(r.logs.length).toBeGreaterThan(3)
    await indexer.syncOnce()
    const board = await api('GET', '/tokens?venue=venue-a&limit=100')
    const t = board.body.tokens.find((x: { address: string }) => x.address === stranger)
    expect(t).toMatchObject({ graduated: true, poolAddress: expect.stringMatching(/^0x[0-9a-f]{40}$/), creatorAgent: null })
    const detail = await api('GET', `/tokens/${stranger}`)
    expect(detail.body).toMatchObject({ market: { phase: 'pool' }, curve: { progressPercent: '100' } })
    // The pool opens at the curve's last price.
    const { rows: [last] } = await app.services.pool.query(`select price_after from trade where token_address = $1 order by block_number desc, log_index desc limit 1`, [stranger])
    const { rows: [snap] } = await app.services.pool.query(`select source, price from token_snapshot where token_address = $1 order by block_number desc, log_index desc limit 1`, [stranger])
    expect(snap).toEqual({ source: 'pool', price: last.price_after })
    expect(detail.body.market.price).toBe(last.price_after)

    await mined(await outsider.writeContract({
      chain: chain.chain, account: outsider.account!, address: chain.manifest.contracts.router, abi: AmmRouterArtifact.abi,
      functionName: 'swapExactETHForTokens', args: [0n, [chain.manifest.contracts.weth, stranger as Address], outsiderAddress, deadline()], value: parseEther('0.01'),
    }))
    await indexer.syncOnce()
    const trades = await api('GET', `/tokens/${stranger}/trades?limit=1`)
    expect(trades.body.trades[0]).toMatchObject({ source: 'pool', side: 'buy', quoteAmount: '10000000000000000', ours: false, creatorFee: '0', trader: outsiderAddress.toLowerCase() })
  })
})

describe('reorgs', () => {
  it('anvil_reorg over an indexed launch and trade: removed, reindexed, our transaction re-broadcast from its stored bytes', async () => {
    const live = await launch('venue-a', { symbol: 'REORG', name: 'Reorg Me', quote: 'ETH' })
    const token = live.tokenAddress
    await curveBuy(outsider, token, '0.05')
    await indexer.syncOnce()
    const { rows: [before] } = await app.services.pool.query(`select id, hash, nonce, raw, block_number, block_hash from chain_tx where hash = $1`, [live.txHash])
    expect(before.block_hash).toMatch(/^0x/)
    expect((await api('GET', `/tokens/${token}/trades`)).body.trades).toHaveLength(1)
    const { rows: [indexedBefore] } = await app.services.pool.query(`select block_number, indexed_block from token where address = $1`, [token])
    expect(indexedBefore.indexed_block).toBe(before.block_number)

    // Replace every block from the launch's on with empty ones.
    const head = await chain.publicClient.getBlockNumber({ cacheTime: 0 })
    const depth = Number(head) - Number(before.block_number) + 1
    await chain.publicClient.request({ method: 'anvil_reorg' as never, params: [depth, []] as never })
    expect(await chain.publicClient.getTransactionReceipt({ hash: live.txHash }).catch(() => null)).toBeNull()

    // Pass(es) until our launch transaction is mined again and indexed.
    let row: { status: string; hash: string; nonce: string; block_hash: string | null; block_number: string | null; reorg_count: number } | undefined
    for (const until = Date.now() + 15_000; Date.now() < until; ) {
      await indexer.syncOnce()
      ;({ rows: [row] } = await app.services.pool.query(`select status, hash, nonce, block_hash, block_number, reorg_count from chain_tx where id = $1`, [before.id]))
      const { rows: t } = await app.services.pool.query(`select indexed_block from token where address = $1`, [token])
      if (row?.status === 'confirmed' && t[0]?.indexed_block !== null) break
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(row).toMatchObject({ status: 'confirmed', hash: before.hash, nonce: before.nonce, reorg_count: 1 })
    expect(row!.block_hash).not.toBe(before.block_hash)
    const tx = await chain.publicClient.getTransaction({ hash: before.hash })
    expect(tx.nonce).toBe(Number(before.nonce))
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: before.hash })
    expect(receipt.blockHash).toBe(row!.block_hash)

    // The outsider's buy went with the removed blocks; the launch is back, at its new block.
    expect((await api('GET', `/tokens/${token}/trades`)).body.trades).toHaveLength(0)
    const detail = await api('GET', `/tokens/${token}`)
    expect(detail.body).toMatchObject({ symbol: 'REORG', indexed: true, blockNumber: Number(receipt.blockNumber), launchTxHash: before.hash, curve: { progressPercent: '0.00' } })
    const { rows: snaps } = await app.services.pool.query(`select block_number from token_snapshot where token_address = $1`, [token])
    expect(snaps.map((s) => Number(s.block_number))).toEqual([Number(receipt.blockNumber)])
    // What was below the common ancestor is untouched.
    expect((await api('GET', `/tokens/${tokens.curve}/trades`)).body.trades).toHaveLength(2)
    const { rows: blocks } = await app.services.pool.query(`select number, hash from chain_block where chain_id = $1 order by number desc limit 1`, [chain.chainId])
    expect(blocks[0].hash).toBe((await chain.publicClient.getBlock({ blockNumber: BigInt(blocks[0].number) })).hash)
  })

  it('a chain that came back behind (evm_revert): the index rewinds and our transaction is sent again', async () => {
    const snapshot = await chain.publicClient.request({ method: 'evm_snapshot' as never })
    const live = await launch('venue-b', { symbol: 'BEHIND', name: 'Behind', quote: 'ETH' })
    await indexer.syncOnce()
    const { rows: [before] } = await app.services.pool.query(`select id, hash, block_number from chain_tx where hash = $1`, [live.txHash])
    const cp = (await app.services.pool.query(`select block_number from chain_checkpoint`)).rows[0].block_number
    expect(Number(cp)).toBeGreaterThanOrEqual(Number(before.block_number))
    await chain.publicClient.request({ method: 'evm_revert' as never, params: [snapshot] as never })
    expect(Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }))).toBeLessThan(Number(before.block_number))

    // (The indexer's own loop may get there first: only the outcome is checked.)
    let status = ''
    for (const until = Date.now() + 10_000; Date.now() < until && status !== 'confirmed'; ) {
      await indexer.syncOnce()
      status = (await app.services.pool.query(`select status from chain_tx where id = $1`, [before.id])).rows[0].status
    }
    expect(status).toBe('confirmed')
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: before.hash })
    expect(receipt.status).toBe('success')
    const board = await api('GET', '/tokens?venue=venue-b')
    expect(board.body.tokens.find((t: { symbol: string }) => t.symbol === 'BEHIND')).toMatchObject({ address: live.tokenAddress, blockNumber: Number(receipt.blockNumber) })
  })
})
