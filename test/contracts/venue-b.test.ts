import { type Address, parseEther, parseUnits } from 'viem'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  AmmPairArtifact,
  AmmRouterArtifact,
  FeeLockerArtifact,
  InstantPoolLauncherArtifact,
  LaunchTokenArtifact,
  MockUSDCArtifact,
  WETH9Artifact,
} from '../../src/dev/artifacts/index.ts'
import { type ChainFixture, eventArgs, MAX_UINT, revertReason, setupChain } from './fixture.ts'

const SUPPLY = 1_000_000_000n * 10n ** 18n
const abi = InstantPoolLauncherArtifact.abi
const lockerAbi = FeeLockerArtifact.abi

/** Pool output: 1% fee hook off the input, then x*y=k with the 0.3% LP fee on effective reserves. */
function modelSwap(amountIn: bigint, reserveIn: bigint, reserveOut: bigint) {
  const hookFee = (amountIn * 100n) / 10_000n
  const afterHook = amountIn - hookFee
  const out = (afterHook * 997n * reserveOut) / (reserveIn * 1000n + afterHook * 997n)
  const creatorShare = hookFee / 2n
  return { hookFee, afterHook, out, creatorShare, platformShare: hookFee - creatorShare }
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
const launcher = () => ({ address: c().venueB, abi }) as const
const locker = () => ({ address: c().feeLocker, abi: lockerAbi }) as const
const router = () => ({ address: c().router, abi: AmmRouterArtifact.abi }) as const
const balanceOf = (token: Address, owner: Address) =>
  f.publicClient.readContract({ address: token, abi: WETH9Artifact.abi, functionName: 'balanceOf', args: [owner] })

async function launch(quote: Address, marketCap: bigint, symbol = 'POOL') {
  const receipt = await f.mined(
    f.wallets.creator.writeContract({ ...launcher(), functionName: 'launch', args: [`Agent ${symbol}`, symbol, quote, marketCap] }),
  )
  return { receipt, ...eventArgs(receipt, abi, 'PoolLaunched') }
}

/** [token reserve, quote reserve, effective quote reserve] of a launched pool. */
async function poolState(pair: Address, token: Address): Promise<[bigint, bigint, bigint]> {
  const p = { address: pair, abi: AmmPairArtifact.abi } as const
  const token0 = await f.publicClient.readContract({ ...p, functionName: 'token0' })
  const [r0, r1] = await f.publicClient.readContract({ ...p, functionName: 'getReserves' })
  const [e0, e1] = await f.publicClient.readContract({ ...p, functionName: 'getEffectiveReserves' })
  return token0 === token ? [r0, r1, e1] : [r1, r0, e0]
}

describe('launch', () => {
  it('puts the whole supply single-sided into a pool priced at the starting market cap, LP locked in the FeeLocker', async () => {
    const mcap = parseEther('10')
    const { receipt, token, pair } = await launch(c().weth, mcap)
    expect(eventArgs(receipt, abi, 'PoolLaunched')).toMatchObject({
      creator: f.addr.creator,
      quote: c().weth,
      symbol: 'POOL',
      supply: SUPPLY,
      startingMarketCap: mcap,
    })
    expect(await poolState(pair, token)).toEqual([SUPPLY, 0n, mcap])
    const p = { address: pair, abi: AmmPairArtifact.abi } as const
    const lpSupply = await f.publicClient.readContract({ ...p, functionName: 'totalSupply' })
    const locked = await f.publicClient.readContract({ ...locker(), functionName: 'lockedLiquidity', args: [token] })
    expect(locked).toBe(lpSupply - 1000n) // the rest is MINIMUM_LIQUIDITY at the dead address
    expect(eventArgs(receipt, lockerAbi, 'PositionLocked')).toEqual({ token, pair, creator: f.addr.creator, liquidity: locked })
    expect(await f.publicClient.readContract({ ...p, functionName: 'feeBps' })).toBe(100n)
    expect(await f.publicClient.readContract({ ...p, functionName: 'feeRecipient' })).toBe(c().feeLocker)
    expect(await f.publicClient.readContract({ ...launcher(), functionName: 'getLaunch', args: [token] })).toEqual({
      creator: f.addr.creator,
      quote: c().weth,
      pair,
    })
  })
})

describe('pool trades and the fee hook', () => {
  it('charges 1% of every input, half to the creator (accrued) and half to the platform (paid)', async () => {
    const mcap = parseEther('10')
    const { token, pair } = await launch(c().weth, mcap)

    // Buy with 1 ETH: fee in WETH.
    const ethIn = parseEther('1')
    const buy = modelSwap(ethIn, mcap, SUPPLY)
    const [, quoted] = await f.publicClient.readContract({ ...router(), functionName: 'getAmountsOut', args: [ethIn, [c().weth, token]] })
    expect(quoted).toBe(buy.out)
    const platformWeth = await balanceOf(c().weth, f.addr.platform)
    const receipt = await f.mined(
      f.wallets.trader.writeContract({ ...router(), functionName: 'swapExactETHForTokens', args: [buy.out, [c().weth, token], f.addr.trader, MAX_UINT], value: ethIn }),
    )
    expect(eventArgs(receipt, lockerAbi, 'FeesAccrued')).toEqual({
      token,
      feeToken: c().weth,
      amount: buy.hookFee,
      creatorShare: buy.creatorShare,
      platformShare: buy.platformShare,
    })
    expect(await balanceOf(token, f.addr.trader)).toBe(buy.out)
    expect((await balanceOf(c().weth, f.addr.platform)) - platformWeth).toBe(buy.platformShare)
    expect(await poolState(pair, token)).toEqual([SUPPLY - buy.out, buy.afterHook, mcap + buy.afterHook])

    // Sell half back for ETH: fee in the launched token.
    const tokensIn = buy.out / 2n
    const sell = modelSwap(tokensIn, SUPPLY - buy.out, mcap + buy.afterHook)
    await f.mined(f.wallets.trader.writeContract({ address: token, abi: LaunchTokenArtifact.abi, functionName: 'approve', args: [c().router, MAX_UINT] }))
    const ethBefore = await f.publicClient.getBalance({ address: f.addr.other })
    const sold = await f.mined(
      f.wallets.trader.writeContract({ ...router(), functionName: 'swapExactTokensForETH', args: [tokensIn, sell.out, [token, c().weth], f.addr.other, MAX_UINT] }),
    )
    expect((await f.publicClient.getBalance({ address: f.addr.other })) - ethBefore).toBe(sell.out)
    expect(eventArgs(sold, lockerAbi, 'FeesAccrued')).toMatchObject({ feeToken: token, amount: sell.hookFee, creatorShare: sell.creatorShare })
    expect(await balanceOf(token, f.addr.platform)).toBe(sell.platformShare)
    expect(await f.publicClient.readContract({ ...locker(), functionName: 'claimable', args: [token] })).toEqual([
      buy.creatorShare,
      sell.creatorShare,
    ])
  })

  it('works the same with a USDC quote', async () => {
    const mcap = parseUnits('30000', 6)
    const { token } = await launch(c().usdc, mcap, 'USDP')
    const usdcIn = parseUnits('500', 6)
    await f.mined(f.wallets.deployer.writeContract({ address: c().usdc, abi: MockUSDCArtifact.abi, functionName: 'mint', args: [f.addr.trader, usdcIn] }))
    await f.mined(f.wallets.trader.writeContract({ address: c().usdc, abi: MockUSDCArtifact.abi, functionName: 'approve', args: [c().router, MAX_UINT] }))
    const buy = modelSwap(usdcIn, mcap, SUPPLY)
    await f.mined(
      f.wallets.trader.writeContract({ ...router(), functionName: 'swapExactTokensForTokens', args: [usdcIn, buy.out, [c().usdc, token], f.addr.trader, MAX_UINT] }),
    )
    expect(await balanceOf(token, f.addr.trader)).toBe(buy.out)
    expect(await balanceOf(c().usdc, c().feeLocker)).toBe(buy.creatorShare)
  })
})

describe('creator fee claims', () => {
  it('send both fee assets to the chosen recipient, once, and only for the creator', async () => {
    const { token } = await launch(c().weth, parseEther('10'))
    const buy = modelSwap(parseEther('2'), parseEther('10'), SUPPLY)
    await f.mined(
      f.wallets.trader.writeContract({ ...router(), functionName: 'swapExactETHForTokens', args: [0n, [c().weth, token], f.addr.trader, MAX_UINT], value: parseEther('2') }),
    )
    await f.mined(f.wallets.trader.writeContract({ address: token, abi: LaunchTokenArtifact.abi, functionName: 'approve', args: [c().router, MAX_UINT] }))
    const tokensIn = parseEther('1000000')
    await f.mined(
      f.wallets.trader.writeContract({ ...router(), functionName: 'swapExactTokensForTokens', args: [tokensIn, 0n, [token, c().weth], f.addr.trader, MAX_UINT] }),
    )
    const tokenFee = (tokensIn * 100n) / 10_000n / 2n

    expect(await revertReason(f.wallets.trader.writeContract({ ...locker(), functionName: 'claim', args: [token, f.addr.trader] }))).toBe(
      'FeeLocker: caller is not the creator',
    )
    const receipt = await f.mined(f.wallets.creator.writeContract({ ...locker(), functionName: 'claim', args: [token, f.addr.other] }))
    expect(eventArgs(receipt, lockerAbi, 'CreatorFeesClaimed')).toEqual({
      token,
      creator: f.addr.creator,
      to: f.addr.other,
      quoteAmount: buy.creatorShare,
      tokenAmount: tokenFee,
    })
    expect(await balanceOf(c().weth, f.addr.other)).toBe(buy.creatorShare)
    expect(await balanceOf(token, f.addr.other)).toBe(tokenFee)
    expect(await revertReason(f.wallets.creator.writeContract({ ...locker(), functionName: 'claim', args: [token, f.addr.other] }))).toBe(
      'FeeLocker: nothing to claim',
    )
  })
})

describe('locked liquidity', () => {
  it('cannot be withdrawn by the creator, the platform, the deployer or anyone', async () => {
    const { token, pair } = await launch(c().weth, parseEther('10'))
    await f.mined(
      f.wallets.trader.writeContract({ ...router(), functionName: 'swapExactETHForTokens', args: [0n, [c().weth, token], f.addr.trader, MAX_UINT], value: parseEther('1') }),
    )
    for (const who of ['creator', 'platform', 'deployer', 'trader'] as const) {
      expect(
        await revertReason(f.wallets[who].writeContract({ address: pair, abi: AmmPairArtifact.abi, functionName: 'burn', args: [f.addr[who]] })),
      ).toBe('AmmPair: liquidity is locked forever')
    }
    // The locker has no way to move LP tokens: its only outgoing transfers are fee payouts.
    const writes = lockerAbi.filter((x) => x.type === 'function' && x.stateMutability !== 'view')
    expect(writes.map((x) => ('name' in x ? x.name : '')).sort()).toEqual(['claim', 'onSwapFee', 'register'])
    expect(await revertReason(f.wallets.creator.writeContract({ ...locker(), functionName: 'onSwapFee', args: [pair, 1n] }))).toBe(
      'FeeLocker: caller is not a registered pair',
    )
    expect(
      await revertReason(f.wallets.deployer.writeContract({ ...locker(), functionName: 'register', args: [token, pair, c().weth, f.addr.deployer] })),
    ).toBe('FeeLocker: caller is not the launcher')
  })
})

describe('bad input', () => {
  it('reverts with readable reasons', async () => {
    const tsla = f.manifest.stocks[0]!.address
    const cr = f.wallets.creator
    const cases: [() => Promise<unknown>, string][] = [
      [() => cr.writeContract({ ...launcher(), functionName: 'launch', args: ['A', 'A', tsla, parseEther('10')] }), 'PoolLauncher: quote asset not allowed'],
      [
        () => cr.writeContract({ ...launcher(), functionName: 'launch', args: ['A', 'A', c().weth, parseEther('0.01')] }),
        'PoolLauncher: starting market cap below minimum',
      ],
      [() => cr.writeContract({ ...launcher(), functionName: 'launch', args: ['A', 'A', c().weth, 10n ** 36n + 1n] }), 'PoolLauncher: starting market cap too high'],
      [() => cr.writeContract({ ...launcher(), functionName: 'launch', args: ['A', '', c().weth, parseEther('1')] }), 'PoolLauncher: symbol must be 1-16 bytes'],
      [() => cr.writeContract({ ...launcher(), functionName: 'setQuoteAsset', args: [tsla, true, 1n] }), 'Owned: caller is not the owner'],
    ]
    for (const [call, reason] of cases) expect(await revertReason(call())).toBe(reason)

    // Right after launch the pool holds no quote: selling into it cannot pay out.
    const { token } = await launch(c().weth, parseEther('10'))
    expect(
      await revertReason(f.publicClient.readContract({ ...router(), functionName: 'getAmountsOut', args: [parseEther('1000'), [token, c().weth]] })),
    ).toBe('AmmPair: insufficient liquidity')
  })
})
