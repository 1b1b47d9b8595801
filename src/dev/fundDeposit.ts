import { parseEther, parseUnits, type Address, type Hex } from 'viem'
import { EMBEDDED_DEPLOYER_KEY, walletClientFor, type ChainHandle } from '../adapters/chain/chain.ts'
import { MockUSDCArtifact } from './artifacts/index.ts'

/**
 * The dev faucet's deposit: real transfers to the caller's account deposit address, so the
 * indexer credits them as it would any deposit (after the confirmations). ETH is a plain
 * transaction from the deployer (topped up with `anvil_setBalance` when short), USDC a mint
 * (a `Transfer` from the zero address); then it mines the blocks they need to reach their
 * confirmations, so the next indexer pass credits them. Called through `createDevFaucet`, which serialises calls
 * (one deployer nonce).
 *
 * @example
 * await fundDeposit({ chain, depositAddress, confirmations: 2 }, accountId, { eth: '0.01', usdc: '10' })
 */
export async function fundDeposit(
  { chain, depositAddress, confirmations }: { chain: ChainHandle; depositAddress(accountId: string): Promise<string>; confirmations: number },
  accountId: string,
  { eth, usdc }: { eth?: string | undefined; usdc?: string | undefined },
) {
  const address = (await depositAddress(accountId)) as Address
  const client = chain.publicClient
  const deployer = walletClientFor(chain, EMBEDDED_DEPLOYER_KEY)
  const transactions: Array<{ asset: 'ETH' | 'USDC'; amount: string; txHash: Hex; blockNumber: number }> = []
  if (eth && parseEther(eth) > 0n) {
    const value = parseEther(eth)
    const balance = await client.getBalance({ address: deployer.account.address })
    if (balance < value + parseEther('1')) {
      await client.request({ method: 'anvil_setBalance' as never, params: [deployer.account.address, `0x${(balance + value + parseEther('10')).toString(16)}`] as never })
    }
    const hash = await deployer.sendTransaction({ to: address, value })
    const r = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 })
    transactions.push({ asset: 'ETH', amount: eth, txHash: hash, blockNumber: Number(r.blockNumber) })
  }
  if (usdc && parseUnits(usdc, 6) > 0n) {
    const hash = await deployer.writeContract({ address: chain.manifest.contracts.usdc, abi: MockUSDCArtifact.abi, functionName: 'mint', args: [address, parseUnits(usdc, 6)] })
    const r = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 })
    transactions.push({ asset: 'USDC', amount: usdc, txHash: hash, blockNumber: Number(r.blockNumber) })
  }
  // The dev chain mines only on transactions: mine the blocks the deposits need to be credited.
  if (transactions.length && confirmations > 1) await client.request({ method: 'anvil_mine' as never, params: [`0x${(confirmations - 1).toString(16)}`] as never })
  return { accountDeposit: true, address, transactions }
}
