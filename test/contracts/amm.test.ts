import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type Address, parseEther, parseUnits } from 'viem'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  AmmFactoryArtifact,
  AmmPairArtifact,
  AmmRouterArtifact,
  MockUSDCArtifact,
  StockTokenArtifact,
  WETH9Artifact,
} from '../../src/dev/artifacts/index.ts'
import { SEED } from '../../src/dev/deploy.ts'
import { readManifest, writeManifest } from '../../src/adapters/chain/manifest.ts'
import { type ChainFixture, eventArgs, MAX_UINT, revertReason, setupChain } from './fixture.ts'

/** Uniswap-V2 exact-input output with the 0.3% LP fee (and an optional extra input fee in bps). */
function amountOut(amountIn: bigint, reserveIn: bigint, reserveOut: bigint, hookBps = 0n): bigint {
  const afterHook = amountIn - (amountIn * hookBps) / 10_000n
  const withFee = afterHook * 997n
  return (withFee * reserveOut) / (reserveIn * 1000n + withFee)
}

let f: ChainFixture
let revert: () => Promise<void>

beforeAll(async () => {
  f = await setupChain()
})
afterAll(async () => {
  await f?.close()
})
beforeEach(async () => {
  revert = await f.snapshot()
})
afterEach(async () => {
  await revert()
})

const c = () => f.manifest.contracts
const router = () => ({ address: c().router, abi: AmmRouterArtifact.abi }) as const
const pairOf = (address: Address) => ({ address, abi: AmmPairArtifact.abi }) as const

async function reservesFor(pair: Address, tokenIn: Address): Promise<[bigint, bigint]> {
  const [r0, r1] = await f.publicClient.readContract({ ...pairOf(pair), functionName: 'getReserves' })
  const token0 = await f.publicClient.readContract({ ...pairOf(pair), functionName: 'token0' })
  return token0 === tokenIn ? [r0, r1] : [r1, r0]
}

async function balanceOf(token: Address, owner: Address): Promise<bigint> {
  return f.publicClient.readContract({ address: token, abi: WETH9Artifact.abi, functionName: 'balanceOf', args: [owner] })
}

/** Mints USDC (deployer is its owner) to `to` and lets the router spend it. */
async function fundUsdc(amount: bigint) {
  await f.mined(
    f.wallets.deployer.writeContract({ address: c().usdc, abi: MockUSDCArtifact.abi, functionName: 'mint', args: [f.addr.trader, amount] }),
  )
  await f.mined(
    f.wallets.trader.writeContract({ address: c().usdc, abi: MockUSDCArtifact.abi, functionName: 'approve', args: [c().router, MAX_UINT] }),
  )
}

describe('deployment', () => {
  // How long deployment takes is a benchmark's business (bench/), not a test's: under load it varies.
  it('deploys and seeds WETH/USDC at 3,000 USDC per ETH and the stock pools', async () => {
    const [rWeth, rUsdc] = await reservesFor(c().wethUsdcPair, c().weth)
    expect([rWeth, rUsdc]).toEqual([SEED.wethUsdc.weth, SEED.wethUsdc.usdc])
    expect((rUsdc * 10n ** 18n) / rWeth).toBe(parseUnits('3000', 6))
    expect(f.manifest.stocks.map((s) => s.symbol)).toEqual(['TSLAx', 'NVDAx', 'AAPLx'])
    for (const s of f.manifest.stocks) {
      const [rStock, rStockUsdc] = await reservesFor(s.pair, s.address)
      expect((rStockUsdc * 10n ** 18n) / rStock).toBe(BigInt(s.seedPriceUsdc))
      expect(await f.publicClient.readContract({ address: s.address, abi: StockTokenArtifact.abi, functionName: 'decimals' })).toBe(18)
    }
    expect(f.manifest.quotes).toEqual({ 'venue-a': ['ETH', 'USDC'], 'venue-b': ['ETH', 'USDC'] })
  })

  it('writes and reads the manifest, rejecting invalid content with the file and field named', async () => {
    const path = join(f.dir, 'manifest', 'deployment.json')
    await writeManifest(path, f.manifest)
    expect(await readManifest(path)).toEqual(f.manifest)
    // addresses in any case are accepted and checksummed
    const lower = JSON.parse(await readFile(path, 'utf8'))
    lower.contracts.router = lower.contracts.router.toLowerCase()
    await writeFile(path, JSON.stringify(lower))
    expect((await readManifest(path)).contracts.router).toBe(f.manifest.contracts.router)
    await writeFile(path, JSON.stringify({ ...lower, contracts: { ...lower.contracts, router: '0x1234' }, quotes: { 'venue-a': ['DOGE'] } }))
    await expect(readManifest(path)).rejects.toThrow(/deployment\.json is invalid[\s\S]*contracts\.router[\s\S]*venue-b/)
  })
})

describe('AmmPair constant product', () => {
  it('pays x*y=k output with the 0.3% fee, updates reserves and emits Swap/Sync', async () => {
    const amountIn = parseUnits('3000', 6)
    await fundUsdc(amountIn)
    const [rUsdc, rWeth] = await reservesFor(c().wethUsdcPair, c().usdc)
    const expected = amountOut(amountIn, rUsdc, rWeth)
    const quoted = await f.publicClient.readContract({ ...router(), functionName: 'getAmountsOut', args: [amountIn, [c().usdc, c().weth]] })
    expect(quoted).toEqual([amountIn, expected])

    const before = await balanceOf(c().weth, f.addr.trader)
    const receipt = await f.mined(
      f.wallets.trader.writeContract({
        ...router(),
        functionName: 'swapExactTokensForTokens',
        args: [amountIn, expected, [c().usdc, c().weth], f.addr.trader, MAX_UINT],
      }),
    )
    expect((await balanceOf(c().weth, f.addr.trader)) - before).toBe(expected)
    const [rUsdcAfter, rWethAfter] = await reservesFor(c().wethUsdcPair, c().usdc)
    expect(rUsdcAfter).toBe(rUsdc + amountIn)
    expect(rWethAfter).toBe(rWeth - expected)
    expect(rUsdcAfter * rWethAfter).toBeGreaterThan(rUsdc * rWeth)

    const swap = eventArgs(receipt, AmmPairArtifact.abi, 'Swap', c().wethUsdcPair)
    expect(swap.to).toBe(f.addr.trader)
    expect(swap.amount0In + swap.amount1In).toBe(amountIn)
    expect(swap.amount0Out + swap.amount1Out).toBe(expected)
    const sync = eventArgs(receipt, AmmPairArtifact.abi, 'Sync', c().wethUsdcPair)
    expect([sync.reserve0, sync.reserve1].sort()).toEqual([rUsdcAfter, rWethAfter].sort())
  })

  it('rejects a swap that does not pay for its output (K) and one without any input', async () => {
    const pair = pairOf(c().wethUsdcPair)
    expect(
      await revertReason(f.wallets.trader.writeContract({ ...pair, functionName: 'swap', args: [1n, 0n, f.addr.trader] })),
    ).toBe('AmmPair: insufficient input amount')
    // Pay 1 USDC but ask for a whole ETH.
    await fundUsdc(parseUnits('1', 6))
    const [r0] = await f.publicClient.readContract({ ...pair, functionName: 'getReserves' })
    const token0 = await f.publicClient.readContract({ ...pair, functionName: 'token0' })
    await f.mined(
      f.wallets.trader.writeContract({ address: c().usdc, abi: MockUSDCArtifact.abi, functionName: 'transfer', args: [c().wethUsdcPair, parseUnits('1', 6)] }),
    )
    const wethOut = parseEther('1')
    const args = token0 === c().weth ? ([wethOut, 0n, f.addr.trader] as const) : ([0n, wethOut, f.addr.trader] as const)
    expect(r0).toBeGreaterThan(0n)
    expect(await revertReason(f.wallets.trader.writeContract({ ...pair, functionName: 'swap', args }))).toBe('AmmPair: K')
  })

  it('adds and removes liquidity proportionally through the router', async () => {
    const usdcIn = parseUnits('30000', 6)
    await fundUsdc(usdcIn)
    await f.mined(f.wallets.trader.writeContract({ address: c().weth, abi: WETH9Artifact.abi, functionName: 'deposit', value: parseEther('10') }))
    await f.mined(
      f.wallets.trader.writeContract({ address: c().weth, abi: WETH9Artifact.abi, functionName: 'approve', args: [c().router, MAX_UINT] }),
    )
    const pair = pairOf(c().wethUsdcPair)
    const supply = await f.publicClient.readContract({ ...pair, functionName: 'totalSupply' })
    const [rWeth] = await reservesFor(c().wethUsdcPair, c().weth)
    await f.mined(
      f.wallets.trader.writeContract({
        ...router(),
        functionName: 'addLiquidity',
        args: [c().weth, c().usdc, parseEther('10'), usdcIn, 0n, 0n, f.addr.trader, MAX_UINT],
      }),
    )
    const lp = await f.publicClient.readContract({ ...pair, functionName: 'balanceOf', args: [f.addr.trader] })
    expect(lp).toBe((parseEther('10') * supply) / rWeth)
    await f.mined(f.wallets.trader.writeContract({ ...pair, functionName: 'approve', args: [c().router, MAX_UINT] }))
    const wethBefore = await balanceOf(c().weth, f.addr.trader)
    await f.mined(
      f.wallets.trader.writeContract({
        ...router(),
        functionName: 'removeLiquidity',
        args: [c().weth, c().usdc, lp, 0n, 0n, f.addr.trader, MAX_UINT],
      }),
    )
    const wethBack = (await balanceOf(c().weth, f.addr.trader)) - wethBefore
    expect(wethBack).toBeLessThanOrEqual(parseEther('10'))
    expect(parseEther('10') - wethBack).toBeLessThan(10n ** 6n) // rounding dust only
  })
})

describe('AmmRouter', () => {
  it('routes TSLAx -> USDC -> WETH and quotes every hop exactly', async () => {
    const tsla = f.manifest.stocks.find((s) => s.symbol === 'TSLAx')!
    const amountIn = parseEther('2')
    await f.mined(f.wallets.deployer.writeContract({ address: tsla.address, abi: StockTokenArtifact.abi, functionName: 'mint', args: [f.addr.trader, amountIn] }))
    await f.mined(
      f.wallets.trader.writeContract({ address: tsla.address, abi: StockTokenArtifact.abi, functionName: 'approve', args: [c().router, MAX_UINT] }),
    )
    const path = [tsla.address, c().usdc, c().weth]
    const [rTsla, rTslaUsdc] = await reservesFor(tsla.pair, tsla.address)
    const [rUsdc, rWeth] = await reservesFor(c().wethUsdcPair, c().usdc)
    const usdcMid = amountOut(amountIn, rTsla, rTslaUsdc)
    const wethOut = amountOut(usdcMid, rUsdc, rWeth)
    const quoted = await f.publicClient.readContract({ ...router(), functionName: 'getAmountsOut', args: [amountIn, path] })
    expect(quoted).toEqual([amountIn, usdcMid, wethOut])
    // ~700 USDC -> ~0.23 ETH
    expect(usdcMid).toBeGreaterThan(parseUnits('690', 6))
    expect(wethOut).toBeGreaterThan(parseEther('0.22'))

    const ethBefore = await f.publicClient.getBalance({ address: f.addr.other })
    const receipt = await f.mined(
      f.wallets.trader.writeContract({
        ...router(),
        functionName: 'swapExactTokensForETH',
        args: [amountIn, wethOut, path, f.addr.other, MAX_UINT],
      }),
    )
    expect((await f.publicClient.getBalance({ address: f.addr.other })) - ethBefore).toBe(wethOut)
    expect(await balanceOf(tsla.address, f.addr.trader)).toBe(0n)
    expect(receipt.logs.length).toBeGreaterThan(4)
  })

  it('swaps ETH in (wrapping) and ETH out (unwrapping)', async () => {
    const ethIn = parseEther('1')
    const path = [c().weth, c().usdc]
    const [, expected] = await f.publicClient.readContract({ ...router(), functionName: 'getAmountsOut', args: [ethIn, path] })
    const usdcBefore = await balanceOf(c().usdc, f.addr.trader)
    await f.mined(
      f.wallets.trader.writeContract({ ...router(), functionName: 'swapExactETHForTokens', args: [expected!, path, f.addr.trader, MAX_UINT], value: ethIn }),
    )
    const got = (await balanceOf(c().usdc, f.addr.trader)) - usdcBefore
    expect(got).toBe(expected)
    expect(got).toBeGreaterThan(parseUnits('2900', 6))
    expect(await balanceOf(c().weth, c().router)).toBe(0n)

    await f.mined(
      f.wallets.trader.writeContract({ address: c().usdc, abi: MockUSDCArtifact.abi, functionName: 'approve', args: [c().router, MAX_UINT] }),
    )
    const ethBefore = await f.publicClient.getBalance({ address: f.addr.other })
    const [, ethExpected] = await f.publicClient.readContract({ ...router(), functionName: 'getAmountsOut', args: [got, [c().usdc, c().weth]] })
    await f.mined(
      f.wallets.trader.writeContract({
        ...router(),
        functionName: 'swapExactTokensForETH',
        args: [got, 0n, [c().usdc, c().weth], f.addr.other, MAX_UINT],
      }),
    )
    expect((await f.publicClient.getBalance({ address: f.addr.other })) - ethBefore).toBe(ethExpected)
    expect(await f.publicClient.getBalance({ address: c().router })).toBe(0n)
  })

  it('reverts on bad input with a readable reason', async () => {
    const trader = f.wallets.trader
    const unknown: Address = '0x00000000000000000000000000000000000c0ffe'
    await fundUsdc(parseUnits('100', 6))
    const swap = (amountIn: bigint, minOut: bigint, path: Address[], deadline = MAX_UINT) =>
      trader.writeContract({ ...router(), functionName: 'swapExactTokensForTokens', args: [amountIn, minOut, path, f.addr.trader, deadline] })

    expect(await revertReason(swap(0n, 0n, [c().usdc, c().weth]))).toBe('AmmRouter: zero amount')
    expect(await revertReason(swap(parseUnits('100', 6), parseEther('1'), [c().usdc, c().weth]))).toBe('AmmRouter: insufficient output amount')
    expect(await revertReason(swap(parseUnits('100', 6), 0n, [c().usdc, unknown]))).toBe('AmmRouter: no pool for token pair')
    expect(await revertReason(swap(parseUnits('100', 6), 0n, [c().usdc]))).toBe('AmmRouter: invalid path')
    expect(await revertReason(swap(parseUnits('100', 6), 0n, [c().usdc, c().weth], 1n))).toBe('AmmRouter: expired')
    expect(
      await revertReason(
        trader.writeContract({ ...router(), functionName: 'swapExactETHForTokens', args: [0n, [c().usdc, c().weth], f.addr.trader, MAX_UINT], value: 1n }),
      ),
    ).toBe('AmmRouter: path must start with WETH')
  })

  it('guards the factory and the tokens', async () => {
    const factory = { address: c().factory, abi: AmmFactoryArtifact.abi } as const
    const noCode: Address = '0x00000000000000000000000000000000000c0ffe'
    expect(await revertReason(f.wallets.other.writeContract({ ...factory, functionName: 'createPair', args: [c().usdc, noCode] }))).toBe(
      'AmmFactory: token has no code',
    )
    expect(await revertReason(f.wallets.other.writeContract({ ...factory, functionName: 'createPair', args: [c().usdc, c().weth] }))).toBe(
      'AmmFactory: pair exists',
    )
    expect(
      await revertReason(f.wallets.other.writeContract({ ...factory, functionName: 'createLaunchPair', args: [c().usdc, c().weth, 1n, f.addr.other, 100n] })),
    ).toBe('AmmFactory: caller is not an approved pool deployer')
    expect(
      await revertReason(f.wallets.other.writeContract({ address: c().usdc, abi: MockUSDCArtifact.abi, functionName: 'mint', args: [f.addr.other, 1n] })),
    ).toBe('Owned: caller is not the owner')
    expect(
      await revertReason(f.wallets.other.writeContract({ address: c().usdc, abi: MockUSDCArtifact.abi, functionName: 'transfer', args: [f.addr.trader, 1n] })),
    ).toBe('ERC20: insufficient balance')
  })
})

describe('WETH9', () => {
  it('wraps and unwraps 1:1', async () => {
    const weth = { address: c().weth, abi: WETH9Artifact.abi } as const
    const receipt = await f.mined(f.wallets.other.writeContract({ ...weth, functionName: 'deposit', value: parseEther('2') }))
    expect(eventArgs(receipt, WETH9Artifact.abi, 'Deposit')).toEqual({ account: f.addr.other, amount: parseEther('2') })
    expect(await balanceOf(c().weth, f.addr.other)).toBe(parseEther('2'))
    const before = await f.publicClient.getBalance({ address: f.addr.other })
    const w = await f.mined(f.wallets.other.writeContract({ ...weth, functionName: 'withdraw', args: [parseEther('1.5')] }))
    const gas = w.gasUsed * w.effectiveGasPrice
    expect((await f.publicClient.getBalance({ address: f.addr.other })) - before + gas).toBe(parseEther('1.5'))
    expect(await balanceOf(c().weth, f.addr.other)).toBe(parseEther('0.5'))
    expect(await revertReason(f.wallets.other.writeContract({ ...weth, functionName: 'withdraw', args: [parseEther('1')] }))).toBe(
      'ERC20: burn amount exceeds balance',
    )
  })
})
