import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { erc20Abi, formatUnits, parseEther, parseUnits, type Address, type Hex, type WalletClient } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startTestApp, waitForLaunchEnd, type Api, type TestApp } from './support/app.ts'
import { AmmPairArtifact, BondingCurveLaunchpadArtifact, MockUSDCArtifact } from '../src/dev/artifacts/index.ts'
import { EMBEDDED_DEPLOYER_KEY, walletClientFor, type ChainHandle } from '../src/adapters/chain/chain.ts'
import { createWalletStore } from '../src/adapters/db/wallet.store.ts'
import { createIndexer } from '../src/adapters/chain/indexer.ts'
import { createLogger } from '../src/logger.ts'
import { cents, usd } from './support/cents.ts'

/**
 * The PnL ledger of a wallet whose history is scripted: USDC and ETH transferred in by an
 * outside wallet (valued at their block), a buy and a sale, a self-funded launch (its seed locked
 * in its pool), a venue-a launch whose creator fees an outside buy earns, some of that buyer's
 * tokens transferred to the agent (valued at the curve's price of their block), and a claim of
 * the fees to the agent's own wallet. The portfolio's and /performance's figures equal a hand computation to
 * the cent, from the chain's own reserves and the operations' recorded values.
 */
let app: TestApp
let api: Api
let chain: ChainHandle
let agent: { id: string; walletAddress: Address }
let outsider: WalletClient
const key = () => `k-${Math.random().toString(36).slice(2)}`


async function mined(hash: Hex) {
  const r = await chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  expect(r.status).toBe('success')
  return r
}

/** USD (18 decimals) of one ETH at the WETH/USDC pool's effective reserves of `block` (USDC 6 decimals, WETH 18). */
async function ethUsd18At(block: bigint) {
  const m = chain.manifest.contracts
  const pair = m.wethUsdcPair
  const token0 = await chain.publicClient.readContract({ address: pair, abi: AmmPairArtifact.abi, functionName: 'token0' })
  const [r0, r1] = await chain.publicClient.readContract({ address: pair, abi: AmmPairArtifact.abi, functionName: 'getEffectiveReserves', blockNumber: block })
  const [w, u] = token0.toLowerCase() === m.weth.toLowerCase() ? [r0, r1] : [r1, r0]
  return (u * 10n ** 18n * 10n ** 18n) / (w * 10n ** 6n)
}

/** Cents of `wei` ETH at `block`, truncated (the hand computation). */
const ethCentsAt = async (wei: bigint, block: bigint) => (wei * (await ethUsd18At(block))) / 10n ** 18n / 10n ** 16n

/** Cents of `amount` of a venue-a token at its curve's price and the ETH price of `block`, truncated. */
async function curveCentsAt(token: Address, amount: bigint, block: bigint) {
  const c = await chain.publicClient.readContract({ address: chain.manifest.contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi, functionName: 'getCurve', args: [token], blockNumber: block })
  // The launchpad's own price: (virtual + real quote reserve) x 1e36 / token reserve (wei per whole token, x 1e18).
  const price = ((c.virtualQuoteReserve + c.quoteReserve) * 10n ** 36n) / c.tokenReserve
  return (amount * price * (await ethUsd18At(block))) / 10n ** 54n / 10n ** 16n
}

async function swap(tokenIn: string, tokenOut: string, amountIn: string) {
  const res = await api('POST', '/swap/execute', { agentId: agent.id, tokenIn, tokenOut, amountIn, slippageBps: 300 })
  expect(res.body, JSON.stringify(res.body)).toMatchObject({ status: 'confirmed' })
  return res.body as { valueInUsd: string; amountOut: string }
}

async function launch(venue: string, body: object) {
  const res = await api('POST', `/launch/${venue}`, { agentId: agent.id, ...body }, { 'idempotency-key': key() })
  expect(res.status, JSON.stringify(res.body)).toBe(202)
  const live = await waitForLaunchEnd(api, res.body.id)
  expect(live.status, JSON.stringify(live)).toBe('live')
  return live as { id: string; tokenAddress: Address }
}

/** Indexes up to the chain's head (the indexer's own loop may run too: only the outcome counts). */
async function indexed() {
  const head = await chain.publicClient.getBlockNumber({ cacheTime: 0 })
  expect(await app.services.indexer!.waitForBlock(head, { timeoutMs: 10_000 })).toBe(true)
}

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  chain = app.services.chain!
  api = (await app.account()).api
  agent = (await api('POST', '/agents', { name: 'ledger', skills: ['trading', 'token-launch'], policy: { max_trade_usd: '5000', max_daily_usd: '20000' } })).body
  // Gas money with no recorded cost (anvil_setBalance): outside the ledger.
  expect((await api('POST', '/dev/faucet', { agentId: agent.id, eth: '1' })).status).toBe(200)
  const outsiderKey = generatePrivateKey()
  const outsiderAddress = privateKeyToAccount(outsiderKey).address
  outsider = walletClientFor(chain, outsiderKey)
  await chain.publicClient.request({ method: 'anvil_setBalance' as never, params: [outsiderAddress, '0x3635C9ADC5DEA00000'] as never })
  const deployer = walletClientFor(chain, EMBEDDED_DEPLOYER_KEY)
  await mined(await deployer.writeContract({ address: chain.manifest.contracts.usdc, abi: MockUSDCArtifact.abi, functionName: 'mint', args: [outsiderAddress, parseUnits('5000', 6)] }))
})
afterAll(async () => {
  await app?.close()
})

describe('the PnL ledger of a scripted wallet', () => {
  const s: Record<string, bigint> = {}
  let b1: { valueInUsd: string; amountOut: string }
  let sale: { valueInUsd: string; amountOut: string }

  it('transfers in, trades, launches and a claim: the portfolio equals the hand computation to the cent', async () => {
    const m = chain.manifest.contracts
    // In: 1,000 USDC by an ERC-20 transfer, 0.5 ETH by a plain transaction.
    await mined(await outsider.writeContract({ chain: chain.chain, account: outsider.account!, address: m.usdc, abi: erc20Abi, functionName: 'transfer', args: [agent.walletAddress, parseUnits('1000', 6)], gas: 100_000n }))
    const ethIn = await mined(await outsider.sendTransaction({ chain: chain.chain, account: outsider.account!, to: agent.walletAddress, value: parseEther('0.5'), gas: 21_000n }))
    s.ethIn = await ethCentsAt(parseEther('0.5'), ethIn.blockNumber)
    await indexed()
    const { rows: ins } = await app.services.pool.query<{ native: boolean; amount: string; usd: string }>(
      `select native, amount::text, trunc(usd_value, 2)::text as usd from agent_transfer_in where agent_id = $1 order by block_number`, [agent.id])
    expect(ins).toEqual([
      { native: false, amount: '1000000000', usd: '1000.00' },
      { native: true, amount: parseEther('0.5').toString(), usd: usd(s.ethIn) },
    ])

    // A buy of TSLAx with 400 of the USDC, then a sale of a third of it.
    b1 = await swap('USDC', 'TSLAx', '400')
    const held = parseUnits(b1.amountOut, 18)
    const sold = ((held / 3n) / 10n ** 12n) * 10n ** 12n
    sale = await swap('TSLAx', 'USDC', formatUnits(sold, 18))

    // A self-funded launch seeded with 0.25 ETH (locked in its pool), and a venue-a launch.
    await launch('self-funded', { symbol: 'SEEDED', name: 'Seeded', quote: 'ETH', seedAmount: '0.25' })
    const curve = await launch('venue-a', { symbol: 'EARNER', name: 'Earner', quote: 'ETH' })
    // An outside buy on its curve earns the agent creator fees; the claim pays them to its own wallet.
    const value = parseEther('1')
    await mined(await outsider.writeContract({
      chain: chain.chain, account: outsider.account!, address: m.venueA, abi: BondingCurveLaunchpadArtifact.abi, functionName: 'buy',
      args: [curve.tokenAddress, value, 0n, outsider.account!.address], value, gas: 400_000n,
    }))
    // Half of what the outside buyer got is transferred to the agent: valued at the curve's price at its block.
    const bought = await chain.publicClient.readContract({ address: curve.tokenAddress, abi: erc20Abi, functionName: 'balanceOf', args: [outsider.account!.address] })
    s.earnerIn = bought / 2n
    const earnerIn = await mined(await outsider.writeContract({ chain: chain.chain, account: outsider.account!, address: curve.tokenAddress, abi: erc20Abi, functionName: 'transfer', args: [agent.walletAddress, s.earnerIn], gas: 100_000n }))
    s.earnerCents = await curveCentsAt(curve.tokenAddress, s.earnerIn, earnerIn.blockNumber)
    expect(s.earnerCents).toBeGreaterThan(0n)
    const claim = await api('POST', '/fees/claim', { agentId: agent.id }, { 'idempotency-key': key() })
    expect(claim.body, JSON.stringify(claim.body)).toMatchObject({ status: 'confirmed', to: agent.walletAddress.toLowerCase() })
    s.claimWei = parseEther(claim.body.claims[0].amount)
    expect(s.claimWei).toBeGreaterThan(0n)
    s.claim = await ethCentsAt(s.claimWei, BigInt(claim.body.blockNumber))

    // Gas: every operation's wei (its receipts' gasUsed x effectiveGasPrice) at its block's ETH price, to the cent.
    const { rows: txs } = await app.services.pool.query<{ hash: Hex }>(`select hash from chain_tx where agent_id = $1 and status = 'confirmed'`, [agent.id])
    let wei = 0n
    for (const t of txs) {
      const r = await chain.publicClient.getTransactionReceipt({ hash: t.hash })
      wei += r.gasUsed * r.effectiveGasPrice
    }
    const { rows: gasRows } = await app.services.pool.query<{ wei: string; block: string }>(
      `select x.snapshot->'context'->'result'->>'gasWei' as wei, x.snapshot->'context'->'result'->>'blockNumber' as block from wallet_op w join actor x on x.id = w.id where w.agent_id = $1 and w.kind <> 'launch'
       union all select x.snapshot->'context'->'ledger'->>'gasWei', x.snapshot->'context'->>'blockNumber' from actor x where x.kind = 'launch' and x.snapshot->'context'->>'agentId' = $1::text`,
      [agent.id])
    expect(gasRows).toHaveLength(5)
    expect(gasRows.reduce((a, o) => a + BigInt(o.wei), 0n)).toBe(wei)
    s.gas = 0n
    for (const o of gasRows) s.gas += await ethCentsAt(BigInt(o.wei), BigInt(o.block))

    // The hand computation, by average cost in cents.
    // USDC: 1,000 in at $1,000.00; 400 out for the buy's value; the sale's USDC in at its value.
    s.usdcRealised = cents(b1.valueInUsd) - 40_000n
    s.usdcBasis = 60_000n + cents(sale.valueInUsd)
    // TSLAx: bought for the buy's value; a third sold.
    s.tslaShare = (cents(b1.valueInUsd) * sold) / held
    s.tslaRealised = cents(sale.valueInUsd) - s.tslaShare
    s.tslaBasis = cents(b1.valueInUsd) - s.tslaShare
    // ETH (and WETH, one position): 0.5 in; the 0.25 seed disposed of for $0; the claim's WETH in at its value.
    s.seedShare = (s.ethIn * parseEther('0.25')) / parseEther('0.5')
    s.ethBasis = s.ethIn - s.seedShare + s.claim
    const realised = s.usdcRealised + s.tslaRealised - s.seedShare + s.claim - s.gas

    const p = await api('GET', `/wallet/portfolio?agentId=${agent.id}`)
    expect(p.status).toBe(200)
    const line = (symbol: string) => p.body.holdings.find((h: { symbol: string }) => h.symbol === symbol)
    expect(line('TSLAx')).toMatchObject({ costBasisUsd: usd(s.tslaBasis), realisedPnlUsd: usd(s.tslaRealised) })
    expect(line('USDC')).toMatchObject({ costBasisUsd: usd(s.usdcBasis), realisedPnlUsd: usd(s.usdcRealised) })
    // ETH and WETH (the claim's) are one position: its basis split between their lines by balance, realised on ETH.
    const ethBal = await chain.publicClient.getBalance({ address: agent.walletAddress })
    const wethBal = await chain.publicClient.readContract({ address: m.weth, abi: erc20Abi, functionName: 'balanceOf', args: [agent.walletAddress] })
    expect(wethBal).toBe(s.claimWei)
    const wethBasis = (s.ethBasis * wethBal) / (ethBal + wethBal)
    expect(line('ETH')).toMatchObject({ costBasisUsd: usd(s.ethBasis - wethBasis), realisedPnlUsd: usd(-s.seedShare) })
    expect(line('WETH')).toMatchObject({ costBasisUsd: usd(wethBasis), realisedPnlUsd: '0.00' })
    expect(line('SEEDED')).toBeUndefined()
    expect(line('EARNER')).toMatchObject({ balance: formatUnits(s.earnerIn, 18), costBasisUsd: usd(s.earnerCents), realisedPnlUsd: '0.00' })
    expect(p.body).toMatchObject({ realisedPnlUsd: usd(realised), gasUsd: usd(s.gas), costBasisUsd: usd(s.usdcBasis + s.tslaBasis + s.ethBasis + s.earnerCents) })
    Object.assign(s, { realised, sold, held })
  })

  it('GET /agents/:id/performance: value held, deposits and PnL over time from the same ledger', async () => {
    // Block times may run ahead of the clock: the range ends a minute from now.
    const to = new Date(Date.now() + 60_000).toISOString()
    const res = await api('GET', `/agents/${agent.id}/performance?interval=1h&to=${to}`)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.points).toHaveLength(31)
    expect(res.body.points[0]).toMatchObject({ valueUsd: '0.00', costBasisUsd: '0.00', depositsUsd: '0.00', withdrawalsUsd: '0.00', operations: 0 })
    const usdcOut = parseUnits(sale.amountOut, 6)
    // Each token at the last price seen: USDC and TSLAx at the sale's (the index has no trades of
    // them); ETH/WETH at the claim's, or at the index's last ETH-quoted trade (the outside curve
    // buy, its quote's USD at its block) when that came after the claim (block times and
    // recorded times; an operation's time never before an earlier one's in block order).
    const { rows: [trade] } = await app.services.pool.query<{ at: Date; q: string }>(
      `select tr.at, trunc(tr.quote_usd)::text as q from trade tr join token t on t.address = tr.token_address
        where t.quote_symbol = 'ETH' and tr.quote_usd is not null order by tr.at desc, tr.block_number desc, tr.log_index desc limit 1`)
    const { rows: [claimAt] } = await app.services.pool.query<{ at: Date }>(
      `select greatest((select max(created_at) from wallet_op where agent_id = $1), (select max(at) from agent_transfer_in where agent_id = $1)) as at`, [agent.id])
    // The index's ETH prices: the trade's, in its step, and as the last one before a later range.
    const wethAddress = chain.manifest.contracts.weth.toLowerCase()
    const prices = (from: number) => createWalletStore(app.services.pool).indexedPrices({
      tokens: [wethAddress], from: new Date(from), to: new Date(to), stepSeconds: 3600, weth: wethAddress, quoteDecimals: [['ETH', 18], ['USDC', 6]],
    })
    const seenEth = { token: wethAddress, at: new Date(trade!.at), usd18: BigInt(trade!.q) }
    expect((await prices(Date.now() - 3_600_000)).at(-1)).toEqual(seenEth)
    expect(await prices(new Date(to).getTime() - 1000)).toEqual([seenEth])
    const weth = parseEther('0.25') + s.claimWei!
    const wethValue = trade && new Date(trade.at).getTime() > new Date(claimAt!.at).getTime()
      ? (weth * BigInt(trade.q)) / 10n ** 18n / 10n ** 16n
      : (weth * s.claim!) / s.claimWei!
    const value =
      ((parseUnits('600', 6) + usdcOut) * cents(sale.valueInUsd)) / usdcOut +
      ((s.held! - s.sold!) * cents(sale.valueInUsd)) / s.sold! +
      wethValue +
      // EARNER at its transfer's own price (the outside buy's, in the index, came before it).
      s.earnerCents!
    const basis = s.usdcBasis! + s.tslaBasis! + s.ethBasis! + s.earnerCents!
    expect(res.body.points.at(-1)).toEqual({
      time: to, valueUsd: usd(value), costBasisUsd: usd(basis), realisedPnlUsd: usd(s.realised!), unrealisedPnlUsd: usd(value - basis),
      depositsUsd: usd(100_000n + s.ethIn! + s.earnerCents!), withdrawalsUsd: '0.00', operations: 8,
    })
  })
})

describe('a reorg', () => {
  it('removes a transfer in from the ledger with its block', async () => {
    const m = chain.manifest.contracts
    await indexed()
    const before = (await api('GET', `/wallet/portfolio?agentId=${agent.id}`)).body
    const r = await mined(await outsider.writeContract({ chain: chain.chain, account: outsider.account!, address: m.usdc, abi: erc20Abi, functionName: 'transfer', args: [agent.walletAddress, parseUnits('12.34', 6)], gas: 100_000n }))
    await indexed()
    const usdcBasis = async () => (await api('GET', `/wallet/portfolio?agentId=${agent.id}`)).body.holdings.find((h: { symbol: string }) => h.symbol === 'USDC').costBasisUsd
    const beforeBasis = before.holdings.find((h: { symbol: string }) => h.symbol === 'USDC').costBasisUsd
    expect(await usdcBasis()).toBe(usd(cents(beforeBasis) + 1234n))

    // Every block from the transfer's on replaced by empty ones: the outsider's transaction is gone.
    const head = await chain.publicClient.getBlockNumber({ cacheTime: 0 })
    await chain.publicClient.request({ method: 'anvil_reorg' as never, params: [Number(head - r.blockNumber) + 1, []] as never })
    let rows = 1
    for (const until = Date.now() + 15_000; Date.now() < until && rows > 0; ) {
      await app.services.indexer!.syncOnce()
      rows = (await app.services.pool.query(`select 1 from agent_transfer_in where tx_hash = $1`, [r.transactionHash.toLowerCase()])).rowCount ?? 0
    }
    expect(rows).toBe(0)
    expect(await usdcBasis()).toBe(beforeBasis)
  })
})

describe('an indexer restart', () => {
  it('a transfer in mined while no indexer ran is indexed by the next one, once, at its own block', async () => {
    const pool = app.services.pool
    await app.services.indexer!.stop()
    const r = await mined(await outsider.sendTransaction({ chain: chain.chain, account: outsider.account!, to: agent.walletAddress, value: parseEther('0.1'), gas: 21_000n }))
    await chain.publicClient.request({ method: 'evm_mine' as never, params: [] as never })
    const rows = async () => (await pool.query<{ usd: string }>(`select trunc(usd_value, 2)::text as usd from agent_transfer_in where tx_hash = $1`, [r.transactionHash.toLowerCase()])).rows
    expect(await rows()).toEqual([])
    // Two indexers one after the other, as two boots of the service would run them.
    for (let boot = 0; boot < 2; boot++) {
      const indexer = createIndexer({ pool, chain, logger: createLogger({ level: 'silent' }), pollMs: 60_000, backstopMs: 60_000 })
      const head = await chain.publicClient.getBlockNumber({ cacheTime: 0 })
      for (let pass = 0; pass < 20; pass++) {
        await indexer.syncOnce()
        if ((await pool.query(`select 1 from chain_checkpoint where chain_id = $1 and block_number >= $2`, [chain.chainId, head])).rowCount) break
      }
      await indexer.stop()
    }
    expect(await rows()).toEqual([{ usd: usd(await ethCentsAt(parseEther('0.1'), r.blockNumber)) }])
  })
})
