import { erc20Abi, type LocalAccount } from 'viem'
import type { ChainHandle } from './chain.ts'
import { InsufficientFundsError, SimulationRevertedError, revertReason } from './txSender.ts'
import { planLaunch, quoteAsset, seedOf } from './launchTx.ts'
import type { LaunchInput } from '../../domain/launches/launch.schema.ts'

/**
 * Checks that a launch can go through, with nothing sent: the agent's quote funds for a
 * self-funded seed, gas money, and an `eth_call` simulation of the launch transaction.
 */
export async function simulateLaunch(deps: { chain: ChainHandle }, ctx: LaunchInput, account: LocalAccount) {
  const { chain } = deps
  const client = chain.publicClient
  const plan = planLaunch(chain.manifest, ctx, account.address, 0)
  const q = quoteAsset(chain.manifest, ctx.quote)
  const ethBalance = await client.getBalance({ address: account.address })
  const block = await client.getBlock()
  const maxFee = (block.baseFeePerGas ?? 1_000_000_000n) * 2n + 1_000_000_000n
  if (ctx.venue === 'self-funded' && !q.native) {
    const seed = seedOf(chain.manifest, ctx)
    const held = await client.readContract({ address: q.address, abi: erc20Abi, functionName: 'balanceOf', args: [account.address] })
    if (held < seed) throw new InsufficientFundsError({ message: `The agent wallet holds ${held} base units of ${ctx.quote}; the seed needs ${seed}.` })
    const gas = 4_100_000n
    if (ethBalance < gas * maxFee) throw new InsufficientFundsError({ needed: gas * maxFee, balance: ethBalance })
    return { gas, maxFeePerGas: maxFee }
  }
  const tx = plan[0]!
  if (ethBalance < (tx.value ?? 0n)) throw new InsufficientFundsError({ needed: tx.value ?? 0n, balance: ethBalance })
  let gas: bigint
  try {
    gas = await client.estimateGas({ account, to: tx.to, data: tx.data, value: tx.value ?? 0n })
  } catch (err) {
    const reason = revertReason(err)
    if (reason) throw new SimulationRevertedError(reason, err)
    if (/insufficient funds/i.test(String(err))) throw new InsufficientFundsError({ needed: maxFee * 3_000_000n, balance: ethBalance })
    throw err
  }
  const needed = gas * maxFee + (tx.value ?? 0n)
  if (ethBalance < needed) throw new InsufficientFundsError({ needed, balance: ethBalance })
  return { gas, maxFeePerGas: maxFee }
}
