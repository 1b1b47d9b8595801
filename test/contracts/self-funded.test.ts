import { type Address, getContractAddress, type Hash, parseEther, parseUnits } from 'viem'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  AmmFactoryArtifact,
  AmmPairArtifact,
  AmmRouterArtifact,
  MockUSDCArtifact,
  SelfFundedTokenArtifact,
} from '../../src/dev/artifacts/index.ts'
import { type ChainFixture, DEAD, eventArgs, MAX_UINT, revertReason, setupChain } from './fixture.ts'

const SUPPLY = 1_000_000_000n * 10n ** 18n

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
const usdc = () => ({ address: c().usdc, abi: MockUSDCArtifact.abi }) as const

/** Deploys a SelfFundedToken from the creator's wallet. */
function deploySelfFunded(quote: Address, quoteAmount: bigint, value?: bigint): Promise<Hash> {
  return f.wallets.creator.deployContract({
    ...SelfFundedTokenArtifact,
    args: ['Self Agent', 'SELF', SUPPLY, c().factory, c().weth, quote, quoteAmount],
    ...(value === undefined ? {} : { value }),
  })
}

/** The address the creator's next deployment will get, after `txsBefore` more transactions. */
async function predictedAddress(txsBefore = 0): Promise<Address> {
  const nonce = await f.publicClient.getTransactionCount({ address: f.addr.creator })
  return getContractAddress({ from: f.addr.creator, nonce: BigInt(nonce + txsBefore) })
}

async function poolOf(token: Address) {
  const pair = await f.publicClient.readContract({ address: token, abi: SelfFundedTokenArtifact.abi, functionName: 'pair' })
  const p = { address: pair, abi: AmmPairArtifact.abi } as const
  const token0 = await f.publicClient.readContract({ ...p, functionName: 'token0' })
  const [r0, r1] = await f.publicClient.readContract({ ...p, functionName: 'getReserves' })
  const supply = await f.publicClient.readContract({ ...p, functionName: 'totalSupply' })
  const dead = await f.publicClient.readContract({ ...p, functionName: 'balanceOf', args: [DEAD] })
  return { pair, tokenReserve: token0 === token ? r0 : r1, quoteReserve: token0 === token ? r1 : r0, supply, dead }
}

describe('SelfFundedToken', () => {
  it('seeds its WETH pool from msg.value in the constructor and locks the LP', async () => {
    const receipt = await f.mined(deploySelfFunded(c().weth, parseEther('1'), parseEther('1')))
    const token = receipt.contractAddress!
    const pool = await poolOf(token)
    expect(pool).toMatchObject({ tokenReserve: SUPPLY, quoteReserve: parseEther('1') })
    expect(pool.supply).toBeGreaterThan(0n)
    expect(pool.dead).toBe(pool.supply) // every LP token at the dead address
    expect(eventArgs(receipt, SelfFundedTokenArtifact.abi, 'SelfFundedLaunch')).toMatchObject({
      creator: f.addr.creator,
      pair: pool.pair,
      quote: c().weth,
      quoteAmount: parseEther('1'),
      supply: SUPPLY,
    })
    expect(await f.publicClient.readContract({ address: c().factory, abi: AmmFactoryArtifact.abi, functionName: 'getPair', args: [token, c().weth] })).toBe(
      pool.pair,
    )

    // The pool trades normally once the token exists.
    const router = { address: c().router, abi: AmmRouterArtifact.abi } as const
    const [, out] = await f.publicClient.readContract({ ...router, functionName: 'getAmountsOut', args: [parseEther('0.1'), [c().weth, token]] })
    await f.mined(
      f.wallets.trader.writeContract({ ...router, functionName: 'swapExactETHForTokens', args: [out!, [c().weth, token], f.addr.trader, MAX_UINT], value: parseEther('0.1') }),
    )
    expect(await f.publicClient.readContract({ address: token, abi: SelfFundedTokenArtifact.abi, functionName: 'balanceOf', args: [f.addr.trader] })).toBe(out)
  })

  it('pulls an ERC-20 quote with transferFrom after the deployer approved the predicted address', async () => {
    const amount = parseUnits('5000', 6)
    await f.mined(f.wallets.deployer.writeContract({ ...usdc(), functionName: 'mint', args: [f.addr.creator, amount] }))
    const predicted = await predictedAddress(1) // the approval comes first
    await f.mined(f.wallets.creator.writeContract({ ...usdc(), functionName: 'approve', args: [predicted, amount] }))
    const receipt = await f.mined(deploySelfFunded(c().usdc, amount))
    expect(receipt.contractAddress?.toLowerCase()).toBe(predicted.toLowerCase())
    const pool = await poolOf(predicted)
    expect(pool).toMatchObject({ tokenReserve: SUPPLY, quoteReserve: amount })
    expect(await f.publicClient.readContract({ ...usdc(), functionName: 'balanceOf', args: [f.addr.creator] })).toBe(0n)
  })

  it('reverts with a clear reason when funds are missing', async () => {
    const amount = parseUnits('5000', 6)
    expect(await revertReason(deploySelfFunded(c().usdc, amount))).toMatch(/^SelfFundedToken: quote allowance too low/)
    await f.mined(f.wallets.creator.writeContract({ ...usdc(), functionName: 'approve', args: [await predictedAddress(1), amount] }))
    expect(await revertReason(deploySelfFunded(c().usdc, amount))).toBe("SelfFundedToken: deployer's quote balance too low")
    expect(await revertReason(deploySelfFunded(c().weth, parseEther('1'), parseEther('0.5')))).toBe(
      'SelfFundedToken: msg.value must equal quoteAmount',
    )
    expect(await revertReason(deploySelfFunded(c().usdc, amount, parseEther('1')))).toBe('SelfFundedToken: ETH can only fund a WETH pool')
    expect(await revertReason(deploySelfFunded(c().weth, 0n))).toBe('SelfFundedToken: zero quote amount')
  })

  it('cannot have its pair squatted before it exists', async () => {
    const predicted = await predictedAddress()
    expect(
      await revertReason(
        f.wallets.other.writeContract({ address: c().factory, abi: AmmFactoryArtifact.abi, functionName: 'createPair', args: [predicted, c().weth] }),
      ),
    ).toBe('AmmFactory: token has no code')
  })
})
