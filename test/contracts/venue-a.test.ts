import { type Address, parseEther, parseUnits } from 'viem'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  AmmPairArtifact,
  AmmRouterArtifact,
  BondingCurveLaunchpadArtifact,
  LaunchTokenArtifact,
  MockUSDCArtifact,
  WETH9Artifact,
} from '../../src/dev/artifacts/index.ts'
import { SEED } from '../../src/dev/deploy.ts'
import { type ChainFixture, DEAD, eventArgs, MAX_UINT, revertReason, setupChain } from './fixture.ts'

const SUPPLY = 1_000_000_000n * 10n ** 18n
const abi = BondingCurveLaunchpadArtifact.abi

/** Off-chain model of the curve: V virtual quote, R real quote, T token reserve. */
interface CurveState {
  V: bigint
  R: bigint
  T: bigint
}
function modelBuy(s: CurveState, quoteIn: bigint) {
  const fee = (quoteIn * 100n) / 10_000n
  const net = quoteIn - fee
  const tokensOut = (s.T * net) / (s.V + s.R + net)
  const creatorFee = fee / 2n
  return { tokensOut, creatorFee, platformFee: fee - creatorFee, next: { V: s.V, R: s.R + net, T: s.T - tokensOut } }
}
function modelSell(s: CurveState, tokensIn: bigint) {
  const gross = ((s.V + s.R) * tokensIn) / (s.T + tokensIn)
  const fee = (gross * 100n) / 10_000n
  const creatorFee = fee / 2n
  return { quoteOut: gross - fee, creatorFee, platformFee: fee - creatorFee, next: { V: s.V, R: s.R - gross, T: s.T + tokensIn } }
}
const price = (s: CurveState) => ((s.V + s.R) * 10n ** 36n) / s.T

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
const pad = () => ({ address: c().venueA, abi }) as const
const balanceOf = (token: Address, owner: Address) =>
  f.publicClient.readContract({ address: token, abi: WETH9Artifact.abi, functionName: 'balanceOf', args: [owner] })
const curve = (token: Address) => f.publicClient.readContract({ ...pad(), functionName: 'getCurve', args: [token] })
const stateOf = async (token: Address): Promise<CurveState> => {
  const cv = await curve(token)
  return { V: cv.virtualQuoteReserve, R: cv.quoteReserve, T: cv.tokenReserve }
}

/** Creates a token as `creator` and returns its address. */
async function createToken(quote: Address, symbol = 'AGNT'): Promise<Address> {
  const receipt = await f.mined(
    f.wallets.creator.writeContract({ ...pad(), functionName: 'createToken', args: [`Agent ${symbol}`, symbol, quote] }),
  )
  return eventArgs(receipt, abi, 'TokenCreated').token
}

async function buyEth(token: Address, quoteIn: bigint, who: 'trader' | 'other' = 'trader') {
  return f.mined(
    f.wallets[who].writeContract({ ...pad(), functionName: 'buy', args: [token, quoteIn, 0n, f.addr[who]], value: quoteIn }),
  )
}

describe('createToken', () => {
  it('mints the fixed supply into the curve, records the creator and reserves an empty launch pair', async () => {
    const receipt = await f.mined(f.wallets.creator.writeContract({ ...pad(), functionName: 'createToken', args: ['Agent One', 'ONE', c().weth] }))
    const ev = eventArgs(receipt, abi, 'TokenCreated')
    expect(ev).toMatchObject({ creator: f.addr.creator, quote: c().weth, name: 'Agent One', symbol: 'ONE', supply: SUPPLY })
    expect(await balanceOf(ev.token, c().venueA)).toBe(SUPPLY)
    const cv = await curve(ev.token)
    expect(cv).toMatchObject({
      creator: f.addr.creator,
      quote: c().weth,
      virtualQuoteReserve: SEED.venueA.ETH.virtualReserve,
      graduationThreshold: SEED.venueA.ETH.graduationThreshold,
      tokenReserve: SUPPLY,
      quoteReserve: 0n,
      graduated: false,
    })
    const pair = { address: cv.pair, abi: AmmPairArtifact.abi } as const
    expect(await f.publicClient.readContract({ ...pair, functionName: 'totalSupply' })).toBe(0n)
    expect(await f.publicClient.readContract({ ...pair, functionName: 'initializer' })).toBe(c().venueA)
    // 1.5 ETH / 1e9 tokens = 1.5e-9 ETH per token
    expect(await f.publicClient.readContract({ ...pad(), functionName: 'currentPrice', args: [ev.token] })).toBe(
      (parseEther('1.5') * 10n ** 36n) / SUPPLY,
    )
  })
})

describe('bonding curve trades', () => {
  it('buys with ETH and sells back exactly as the off-chain model, splitting the 1% fee creator/platform', async () => {
    const token = await createToken(c().weth)
    let s = await stateOf(token)
    const quoteIn = parseEther('0.5')
    const buy = modelBuy(s, quoteIn)
    expect(await f.publicClient.readContract({ ...pad(), functionName: 'quoteBuy', args: [token, quoteIn] })).toBe(buy.tokensOut)

    const platformBefore = await balanceOf(c().weth, f.addr.platform)
    const receipt = await buyEth(token, quoteIn)
    expect(eventArgs(receipt, abi, 'Trade')).toEqual({
      token,
      trader: f.addr.trader,
      isBuy: true,
      quoteAmount: quoteIn,
      tokenAmount: buy.tokensOut,
      creatorFee: buy.creatorFee,
      platformFee: buy.platformFee,
      priceAfter: price(buy.next),
    })
    expect(await balanceOf(token, f.addr.trader)).toBe(buy.tokensOut)
    expect((await balanceOf(c().weth, f.addr.platform)) - platformBefore).toBe(buy.platformFee)
    s = await stateOf(token)
    expect(s).toEqual(buy.next)

    const tokensIn = buy.tokensOut / 3n
    const sell = modelSell(s, tokensIn)
    expect(await f.publicClient.readContract({ ...pad(), functionName: 'quoteSell', args: [token, tokensIn] })).toBe(sell.quoteOut)
    await f.mined(f.wallets.trader.writeContract({ address: token, abi: LaunchTokenArtifact.abi, functionName: 'approve', args: [c().venueA, MAX_UINT] }))
    const wethBefore = await balanceOf(c().weth, f.addr.trader)
    const sold = await f.mined(f.wallets.trader.writeContract({ ...pad(), functionName: 'sell', args: [token, tokensIn, sell.quoteOut, f.addr.trader] }))
    expect(eventArgs(sold, abi, 'Trade')).toMatchObject({ isBuy: false, quoteAmount: sell.quoteOut, tokenAmount: tokensIn, creatorFee: sell.creatorFee })
    expect((await balanceOf(c().weth, f.addr.trader)) - wethBefore).toBe(sell.quoteOut)
    expect(await stateOf(token)).toEqual(sell.next)
    expect(await f.publicClient.readContract({ ...pad(), functionName: 'creatorFees', args: [token] })).toEqual([
      buy.creatorFee + sell.creatorFee,
      0n,
    ])

    // sellForETH pays native ETH
    const ethBefore = await f.publicClient.getBalance({ address: f.addr.other })
    const sell2 = modelSell(sell.next, tokensIn)
    await f.mined(f.wallets.trader.writeContract({ ...pad(), functionName: 'sellForETH', args: [token, tokensIn, 0n, f.addr.other] }))
    expect((await f.publicClient.getBalance({ address: f.addr.other })) - ethBefore).toBe(sell2.quoteOut)
  })

  it('trades a USDC-quoted token with the USDC curve parameters', async () => {
    const token = await createToken(c().usdc, 'USDT1')
    const quoteIn = parseUnits('1000', 6)
    await f.mined(f.wallets.deployer.writeContract({ address: c().usdc, abi: MockUSDCArtifact.abi, functionName: 'mint', args: [f.addr.trader, quoteIn] }))
    await f.mined(f.wallets.trader.writeContract({ address: c().usdc, abi: MockUSDCArtifact.abi, functionName: 'approve', args: [c().venueA, MAX_UINT] }))
    const buy = modelBuy(await stateOf(token), quoteIn)
    expect(buy.next.V).toBe(parseUnits('4500', 6))
    await f.mined(f.wallets.trader.writeContract({ ...pad(), functionName: 'buy', args: [token, quoteIn, buy.tokensOut, f.addr.trader] }))
    expect(await balanceOf(token, f.addr.trader)).toBe(buy.tokensOut)
    expect(await balanceOf(c().usdc, f.addr.trader)).toBe(0n)
    expect(await stateOf(token)).toEqual(buy.next)
  })
})

describe('creator fees', () => {
  it('are claimable once, only by the creator, to a recipient of their choice', async () => {
    const token = await createToken(c().weth)
    const buy = modelBuy(await stateOf(token), parseEther('1'))
    await buyEth(token, parseEther('1'))

    expect(await revertReason(f.wallets.trader.writeContract({ ...pad(), functionName: 'claimCreatorFees', args: [token, f.addr.trader] }))).toBe(
      'Launchpad: caller is not the creator',
    )
    const before = await balanceOf(c().weth, f.addr.other)
    const receipt = await f.mined(f.wallets.creator.writeContract({ ...pad(), functionName: 'claimCreatorFees', args: [token, f.addr.other] }))
    expect(eventArgs(receipt, abi, 'CreatorFeesClaimed')).toEqual({ token, creator: f.addr.creator, to: f.addr.other, amount: buy.creatorFee })
    expect((await balanceOf(c().weth, f.addr.other)) - before).toBe(buy.creatorFee)
    expect(await f.publicClient.readContract({ ...pad(), functionName: 'creatorFees', args: [token] })).toEqual([buy.creatorFee, buy.creatorFee])
    expect(await revertReason(f.wallets.creator.writeContract({ ...pad(), functionName: 'claimCreatorFees', args: [token, f.addr.other] }))).toBe(
      'Launchpad: nothing to claim',
    )
  })
})

describe('graduation', () => {
  it('moves the curve into the AMM pool at the threshold, at the same price, with the LP locked', async () => {
    const token = await createToken(c().weth)
    await buyEth(token, parseEther('2'))
    expect((await curve(token)).graduated).toBe(false)

    const before = await stateOf(token)
    const last = modelBuy(before, parseEther('2.5')) // R crosses the 4 ETH threshold
    expect(last.next.R).toBeGreaterThanOrEqual(SEED.venueA.ETH.graduationThreshold)
    const receipt = await buyEth(token, parseEther('2.5'), 'other')
    const cv = await curve(token)
    expect(eventArgs(receipt, abi, 'Graduated')).toEqual({ token, pair: cv.pair, quoteAmount: last.next.R, tokenAmount: last.next.T })
    expect(cv).toMatchObject({ graduated: true, tokenReserve: 0n, quoteReserve: 0n })

    const pair = { address: cv.pair, abi: AmmPairArtifact.abi } as const
    const token0 = await f.publicClient.readContract({ ...pair, functionName: 'token0' })
    const [r0, r1] = await f.publicClient.readContract({ ...pair, functionName: 'getReserves' })
    const [e0, e1] = await f.publicClient.readContract({ ...pair, functionName: 'getEffectiveReserves' })
    const [tokenR, quoteR, quoteEff, tokenEff] = token0 === token ? [r0, r1, e1, e0] : [r1, r0, e0, e1]
    expect([tokenR, quoteR]).toEqual([last.next.T, last.next.R])
    expect(quoteEff).toBe(last.next.R + last.next.V) // virtual reserve carried over: price is continuous
    expect((quoteEff * 10n ** 36n) / tokenEff).toBe(price(last.next))
    // only the unclaimed creator fees stay behind
    const [earned] = await f.publicClient.readContract({ ...pad(), functionName: 'creatorFees', args: [token] })
    expect(await balanceOf(c().weth, c().venueA)).toBe(earned)

    // all LP tokens are at the dead address
    const supply = await f.publicClient.readContract({ ...pair, functionName: 'totalSupply' })
    expect(supply).toBeGreaterThan(0n)
    expect(await f.publicClient.readContract({ ...pair, functionName: 'balanceOf', args: [DEAD] })).toBe(supply)

    // the curve is closed; the pool trades
    expect(await revertReason(f.wallets.trader.writeContract({ ...pad(), functionName: 'buy', args: [token, 1n, 0n, f.addr.trader], value: 1n }))).toBe(
      'Launchpad: token graduated, trade it on its AMM pool',
    )
    const router = { address: c().router, abi: AmmRouterArtifact.abi } as const
    const [, out] = await f.publicClient.readContract({ ...router, functionName: 'getAmountsOut', args: [parseEther('0.1'), [c().weth, token]] })
    const tokensBefore = await balanceOf(token, f.addr.trader)
    await f.mined(
      f.wallets.trader.writeContract({ ...router, functionName: 'swapExactETHForTokens', args: [out!, [c().weth, token], f.addr.trader, MAX_UINT], value: parseEther('0.1') }),
    )
    expect((await balanceOf(token, f.addr.trader)) - tokensBefore).toBe(out)
  })

  it('locked liquidity cannot be withdrawn or added to by anyone', async () => {
    const token = await createToken(c().weth)
    await buyEth(token, parseEther('5'))
    const { pair } = await curve(token)
    for (const who of ['creator', 'platform', 'deployer', 'trader'] as const) {
      expect(
        await revertReason(f.wallets[who].writeContract({ address: pair, abi: AmmPairArtifact.abi, functionName: 'burn', args: [f.addr[who]] })),
      ).toBe('AmmPair: liquidity is locked forever')
      expect(
        await revertReason(f.wallets[who].writeContract({ address: pair, abi: AmmPairArtifact.abi, functionName: 'mint', args: [f.addr[who]] })),
      ).toBe('AmmPair: only the initializer can add liquidity')
    }
    expect(
      await revertReason(
        f.wallets.trader.writeContract({
          address: c().router,
          abi: AmmRouterArtifact.abi,
          functionName: 'addLiquidity',
          args: [token, c().weth, 1n, 1n, 0n, 0n, f.addr.trader, MAX_UINT],
        }),
      ),
    ).toBe('AmmRouter: launch pools do not accept liquidity')
  })
})

describe('bad input', () => {
  it('reverts with readable reasons', async () => {
    const token = await createToken(c().weth)
    const usdcToken = await createToken(c().usdc, 'USD2')
    const unknown: Address = '0x00000000000000000000000000000000000c0ffe'
    const t = f.wallets.trader
    const tsla = f.manifest.stocks[0]!.address
    const cases: [() => Promise<unknown>, string][] = [
      [() => f.wallets.creator.writeContract({ ...pad(), functionName: 'createToken', args: ['Bad', 'BAD', tsla] }), 'Launchpad: quote asset not allowed'],
      [() => f.wallets.creator.writeContract({ ...pad(), functionName: 'createToken', args: ['', 'BAD', c().weth] }), 'Launchpad: name must be 1-64 bytes'],
      [() => t.writeContract({ ...pad(), functionName: 'buy', args: [token, 0n, 0n, f.addr.trader] }), 'Launchpad: zero amount'],
      [() => t.writeContract({ ...pad(), functionName: 'buy', args: [unknown, 1n, 0n, f.addr.trader], value: 1n }), 'Launchpad: unknown token'],
      [
        () => t.writeContract({ ...pad(), functionName: 'buy', args: [token, parseEther('0.1'), MAX_UINT, f.addr.trader], value: parseEther('0.1') }),
        'Launchpad: tokens out below minimum',
      ],
      [() => t.writeContract({ ...pad(), functionName: 'buy', args: [token, 2n, 0n, f.addr.trader], value: 1n }), 'Launchpad: msg.value must equal quoteIn'],
      [() => t.writeContract({ ...pad(), functionName: 'buy', args: [usdcToken, 1n, 0n, f.addr.trader], value: 1n }), 'Launchpad: ETH sent for a non-WETH quote'],
      [() => t.writeContract({ ...pad(), functionName: 'buy', args: [usdcToken, 1000n, 0n, f.addr.trader] }), 'ERC20: insufficient allowance'],
      [() => t.writeContract({ ...pad(), functionName: 'sell', args: [token, 0n, 0n, f.addr.trader] }), 'Launchpad: zero amount'],
      [() => t.writeContract({ ...pad(), functionName: 'sellForETH', args: [usdcToken, 1n, 0n, f.addr.trader] }), 'Launchpad: quote asset is not WETH'],
      [() => f.publicClient.readContract({ ...pad(), functionName: 'quoteBuy', args: [unknown, 1n] }), 'Launchpad: unknown token'],
      [() => t.writeContract({ ...pad(), functionName: 'setQuoteAsset', args: [tsla, true, 1n, 1n] }), 'Owned: caller is not the owner'],
    ]
    for (const [call, reason] of cases) expect(await revertReason(call())).toBe(reason)

    await buyEth(token, parseEther('0.1'))
    const held = await balanceOf(token, f.addr.trader)
    await f.mined(t.writeContract({ address: token, abi: LaunchTokenArtifact.abi, functionName: 'approve', args: [c().venueA, MAX_UINT] }))
    const quoteOut = await f.publicClient.readContract({ ...pad(), functionName: 'quoteSell', args: [token, held] })
    expect(await revertReason(t.writeContract({ ...pad(), functionName: 'sell', args: [token, held, quoteOut + 1n, f.addr.trader] }))).toBe(
      'Launchpad: quote out below minimum',
    )
    expect(await revertReason(t.writeContract({ ...pad(), functionName: 'sell', args: [token, held + 1n, 0n, f.addr.trader] }))).toBe(
      'ERC20: insufficient balance',
    )
  })
})
