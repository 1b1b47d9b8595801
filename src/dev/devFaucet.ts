import { erc20Abi, formatEther, formatUnits, parseEther, parseUnits, type Address } from 'viem'
import type { ChainHandle } from '../adapters/chain/chain.ts'
import { fundDeposit } from './fundDeposit.ts'
import { EMBEDDED_DEPLOYER_KEY, walletClientFor } from '../adapters/chain/chain.ts'
import { MockUSDCArtifact } from './artifacts/index.ts'
import { NotFoundError } from '../domain/errors.ts'
import type { AgentsRepository } from '../domain/agents/ports.ts'

/** An agent wallet (`agentId`) or the caller's account deposit address (`accountDeposit: true`). */
export type FaucetRequest = { agentId?: string | undefined; accountDeposit?: boolean | undefined; eth?: string | undefined; usdc?: string | undefined }

/**
 * The dev faucet with its calls taken one at a time: each reads a balance before setting it and
 * sends a mint from the one deployer key, so two at once would lose a top-up or collide on the
 * deployer's nonce.
 *
 * @example
 * const faucet = createDevFaucet({ agents, chain, depositAddress, confirmations: 2 })
 * await faucet(accountId, { agentId, eth: '10', usdc: '10000' })
 */
export function createDevFaucet(deps: { agents: AgentsRepository; chain: ChainHandle; depositAddress(accountId: string): Promise<string>; confirmations: number }) {
  let tail: Promise<unknown> = Promise.resolve()
  const once = (accountId: string, body: FaucetRequest): Promise<object> =>
    body.agentId ? devFaucet(deps, accountId, { ...body, agentId: body.agentId }) : fundDeposit(deps, accountId, body)
  return (accountId: string, body: FaucetRequest) => {
    const run = tail.then(() => once(accountId, body), () => once(accountId, body))
    tail = run.catch(() => {})
    return run
  }
}

/**
 * Funds an agent wallet on the embedded chain: ETH through `anvil_setBalance` (added to what
 * it holds) and USDC minted by the deployer, which owns MockUSDC there. Call it through
 * `createDevFaucet`, which serialises calls.
 *
 * @example
 * await devFaucet({ agents, chain }, accountId, { agentId, eth: '10', usdc: '10000' })
 */
export async function devFaucet(
  { agents, chain }: { agents: AgentsRepository; chain: ChainHandle },
  accountId: string,
  { agentId, eth, usdc }: { agentId: string; eth?: string | undefined; usdc?: string | undefined },
) {
  const agent = await agents.findOwned(accountId, agentId)
  if (!agent || agent.status === 'deleted') throw new NotFoundError('Agent')
  const address = agent.walletAddress
  const client = chain.publicClient
  const usdcAddress = chain.manifest.contracts.usdc
  if (eth && eth !== '0') {
    const current = await client.getBalance({ address })
    await client.request({
      method: 'anvil_setBalance' as never,
      params: [address, `0x${(current + parseEther(eth)).toString(16)}`] as never,
    })
    chain.stateChanged?.()
  }
  if (usdc && usdc !== '0') {
    const wallet = walletClientFor(chain, EMBEDDED_DEPLOYER_KEY)
    const hash = await wallet.writeContract({
      address: usdcAddress,
      abi: MockUSDCArtifact.abi,
      functionName: 'mint',
      args: [address, parseUnits(usdc, 6)],
    })
    await client.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  }
  const [ethBalance, usdcBalance] = await Promise.all([
    client.getBalance({ address }),
    client.readContract({ address: usdcAddress, abi: erc20Abi, functionName: 'balanceOf', args: [address] }),
  ])
  return { agentId, walletAddress: address, balances: { ETH: formatEther(ethBalance), USDC: formatUnits(usdcBalance, 6) } }
}
