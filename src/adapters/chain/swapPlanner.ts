import type { TokenInfo } from './tokenInfo.ts'
/**
 * The transactions of a swap and what their receipts mean: the `swap` wallet-operation
 * planner, plus `eth_simulateV1` simulations of a whole plan (an approval followed by the swap
 * it enables) and of a sell-back, for the honeypot / transfer-tax warning.
 */
import {
  decodeFunctionResult,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  maxUint256,
  parseEventLogs,
  type Address,
  type Hex,
  type StateOverride,
} from 'viem'
import type { ChainHandle } from './chain.ts'
import { AmmRouterArtifact, BondingCurveLaunchpadArtifact, WETH9Artifact } from '../../dev/artifacts/index.ts'
import type { PlannedTx } from './txSender.ts'
import { revertReason } from './txSender.ts'
import type { WalletOpPlanner } from './walletOpPorts.ts'
import type { SwapRoute } from './swapRoute.ts'

/** The token fields a swap needs (a `TokenInfo`). */
import type { SimulatedCall, SwapParams, SwapTokenInfo } from '../../domain/swaps/swap.types.ts'
export type { SimulatedCall, SwapParams, SwapTokenInfo } from '../../domain/swaps/swap.types.ts'

type BuildInput = {
  route: SwapRoute
  nativeIn: boolean
  nativeOut: boolean
  amountIn: bigint
  minAmountOut: bigint
  recipient: Address
  deadline: bigint
}

/** The contract a swap's input must be approved to (null when ETH is paid). */
export function spenderOf(chain: ChainHandle, route: SwapRoute, nativeIn: boolean): Address | null {
  if (nativeIn) return null
  return (route.kind === 'amm' ? chain.manifest.contracts.router : chain.manifest.contracts.venueA).toLowerCase() as Address
}

/** The swap transaction itself (no approval). */
export function swapTx(chain: ChainHandle, p: BuildInput): PlannedTx {
  const { router, venueA } = chain.manifest.contracts
  const to = getAddress(p.recipient)
  if (p.route.kind === 'curve-buy') {
    const token = getAddress(p.route.path[1]!)
    return {
      kind: 'swap',
      to: venueA,
      data: encodeFunctionData({ abi: BondingCurveLaunchpadArtifact.abi, functionName: 'buy', args: [token, p.amountIn, p.minAmountOut, to] }),
      value: p.nativeIn ? p.amountIn : 0n,
    }
  }
  if (p.route.kind === 'curve-sell') {
    const token = getAddress(p.route.path[0]!)
    return {
      kind: 'swap',
      to: venueA,
      data: encodeFunctionData({
        abi: BondingCurveLaunchpadArtifact.abi,
        functionName: p.nativeOut ? 'sellForETH' : 'sell',
        args: [token, p.amountIn, p.minAmountOut, to],
      }),
    }
  }
  const path = p.route.path.map((a) => getAddress(a))
  const abi = AmmRouterArtifact.abi
  if (p.nativeIn) {
    return {
      kind: 'swap',
      to: router,
      data: encodeFunctionData({ abi, functionName: 'swapExactETHForTokens', args: [p.minAmountOut, path, to, p.deadline] }),
      value: p.amountIn,
    }
  }
  return {
    kind: 'swap',
    to: router,
    data: encodeFunctionData({
      abi,
      functionName: p.nativeOut ? 'swapExactTokensForETH' : 'swapExactTokensForTokens',
      args: [p.amountIn, p.minAmountOut, path, to, p.deadline],
    }),
  }
}

/** An unlimited approval (the router and the launchpad only ever pull from `msg.sender`). */
export function approveTx(token: Address, spender: Address): PlannedTx {
  return {
    kind: 'swap.approve',
    to: getAddress(token),
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [getAddress(spender), maxUint256] }),
  }
}

/** Output amount a swap call returns (router: the amounts array; curve: one amount). */
function decodeSwapOutput(route: SwapRoute, nativeOut: boolean, data: Hex): bigint {
  if (route.kind === 'amm') {
    const amounts = decodeFunctionResult({ abi: AmmRouterArtifact.abi, functionName: 'swapExactTokensForTokens', data })
    return amounts.at(-1) ?? 0n
  }
  const functionName = route.kind === 'curve-buy' ? 'buy' : nativeOut ? 'sellForETH' : 'sell'
  return decodeFunctionResult({ abi: BondingCurveLaunchpadArtifact.abi, functionName, data }) as bigint
}


/** Runs `txs` in order from `from` in one simulated block (state carries over between them). */
export async function simulateTxs(
  chain: ChainHandle,
  from: Address,
  txs: PlannedTx[],
  stateOverrides?: StateOverride,
): Promise<SimulatedCall[]> {
  const [block] = await chain.publicClient.simulateBlocks({
    blocks: [
      {
        calls: txs.map((tx) => ({ account: from, to: tx.to ?? null, data: tx.data ?? '0x', value: tx.value ?? 0n })),
        ...(stateOverrides ? { stateOverrides } : {}),
      },
    ],
  })
  return block!.calls.map((c) => ({
    ok: c.status === 'success',
    gasUsed: c.gasUsed,
    data: c.data,
    reason: c.status === 'success' ? undefined : (revertReason(c.error) ?? c.error?.message ?? 'reverted'),
  }))
}


/** The `swap` wallet operation: [approve,] swap; its outcome is what actually arrived. */
export function createSwapPlanner(): WalletOpPlanner {
  return {
    plan({ params, account, chain }) {
      const p = params as SwapParams
      const swap = swapTx(chain, {
        route: p.route,
        nativeIn: p.tokenInInfo.native,
        nativeOut: p.tokenOutInfo.native,
        amountIn: BigInt(p.amountIn),
        minAmountOut: BigInt(p.minAmountOut),
        recipient: account.address,
        deadline: BigInt(p.deadline),
      })
      if (!p.approve) return [swap]
      return [approveTx(p.tokenIn, p.approve), { ...swap, gas: BigInt(p.swapGas ?? 500_000) }]
    },

    async outcome({ params, account, receipts, chain }) {
      const p = params as SwapParams
      const receipt = receipts.at(-1)!
      const me = account.address.toLowerCase()
      let out = 0n
      if (p.tokenOutInfo.native) {
        const payers = new Set([chain.manifest.contracts.router.toLowerCase(), chain.manifest.contracts.venueA.toLowerCase()])
        const logs = parseEventLogs({ abi: WETH9Artifact.abi, logs: receipt.logs, eventName: 'Withdrawal' })
        for (const log of logs) {
          if (log.address.toLowerCase() === p.tokenOut && payers.has(log.args.account.toLowerCase())) out += log.args.amount
        }
      } else {
        const logs = parseEventLogs({ abi: erc20Abi, logs: receipt.logs, eventName: 'Transfer' })
        for (const log of logs) {
          if (log.address.toLowerCase() === p.tokenOut && log.args.to.toLowerCase() === me) out += log.args.value
        }
      }
      return { amountOutBaseUnits: out.toString() }
    },
  }
}

export type SellBackWarning = { code: 'sell_back_reverts' | 'transfer_tax' | 'sell_back_loss' | 'sell_back_unchecked'; message: string }

/**
 * Honeypot / transfer-tax check for a token bought by a swap: simulates, from the agent's own
 * wallet, the purchase and then selling most of it back along the reverse route, and warns
 * when less arrives than the route pays out, when the sell-back reverts, or when it returns
 * far less than the fees explain. Nothing is sent.
 */
export async function sellBackCheck(
  chain: ChainHandle,
  input: {
    wallet: Address
    route: SwapRoute
    reverse: SwapRoute
    tokenIn: SwapTokenInfo
    tokenOut: SwapTokenInfo
    amountIn: bigint
    expectedOut: bigint
    deadline: bigint
  },
): Promise<SellBackWarning[]> {
  const { route, reverse, tokenIn, tokenOut, amountIn, expectedOut, wallet, deadline } = input
  const buy = swapTx(chain, { route, nativeIn: tokenIn.native, nativeOut: false, amountIn, minAmountOut: 0n, recipient: wallet, deadline })
  const sellAmount = (expectedOut * 98n) / 100n
  if (sellAmount === 0n) return []
  const sell = swapTx(chain, { route: reverse, nativeIn: false, nativeOut: tokenIn.native, amountIn: sellAmount, minAmountOut: 0n, recipient: wallet, deadline })
  const balanceCall = (): PlannedTx => ({
    kind: 'read',
    to: getAddress(tokenOut.address),
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [getAddress(wallet)] }),
  })
  const buySpender = spenderOf(chain, route, tokenIn.native)
  const txs: PlannedTx[] = [
    ...(buySpender ? [approveTx(tokenIn.address, buySpender)] : []),
    balanceCall(),
    buy,
    balanceCall(),
    approveTx(tokenOut.address, spenderOf(chain, reverse, false)!),
    sell,
  ]
  // Paying ETH: give the wallet enough for the simulation (only the token's behaviour is tested here).
  const overrides: StateOverride | undefined = tokenIn.native
    ? [{ address: getAddress(wallet), balance: amountIn + 10n ** 20n }]
    : undefined
  let calls: SimulatedCall[]
  try {
    calls = await simulateTxs(chain, wallet, txs, overrides)
  } catch (err) {
    return [{ code: 'sell_back_unchecked', message: `Could not simulate selling ${tokenOut.symbol} back: ${String((err as Error).message ?? err).slice(0, 200)}` }]
  }
  const at = buySpender ? 1 : 0
  const [before, bought, after, , sold] = calls.slice(at)
  if (!bought?.ok || !before?.ok || !after?.ok) {
    return [{ code: 'sell_back_unchecked', message: `Could not simulate this purchase from the wallet (${bought?.reason ?? 'no result'}), so selling ${tokenOut.symbol} back was not checked.` }]
  }
  const warnings: SellBackWarning[] = []
  const decodeBalance = (data: Hex) => decodeFunctionResult({ abi: erc20Abi, functionName: 'balanceOf', data })
  const received = decodeBalance(after.data) - decodeBalance(before.data)
  if (received * 100n < expectedOut * 97n) {
    const pct = expectedOut === 0n ? 0n : (received * 100n) / expectedOut
    warnings.push({
      code: 'transfer_tax',
      message: `Only ${pct}% of the ${tokenOut.symbol} the pool pays out would arrive in the wallet: the token appears to take a transfer tax.`,
    })
  }
  if (!sold?.ok) {
    warnings.push({ code: 'sell_back_reverts', message: `Selling ${tokenOut.symbol} back right after buying reverts (${sold?.reason ?? 'no result'}): it may be impossible to sell.` })
    return warnings
  }
  const back = decodeSwapOutput(reverse, tokenIn.native, sold.data)
  const fair = (amountIn * sellAmount) / expectedOut
  const feeBps = BigInt([...route.hops, ...reverse.hops].reduce((s, h) => s + h.feeBps, 0))
  const floor = (fair * (10_000n - feeBps - 500n)) / 10_000n
  if (back < floor) {
    const pct = fair === 0n ? 0n : (back * 100n) / fair
    warnings.push({
      code: 'sell_back_loss',
      message: `Selling ${tokenOut.symbol} back right after buying returns only ${pct}% of what it cost, far less than the fees explain.`,
    })
  }
  return warnings
}
