import { encodeFunctionData, erc20Abi, type Address } from 'viem'
import type { WalletOpPlanner } from './walletOps.ts'

/** Params of a `transfer` wallet operation (JSON: the amount in base units as a decimal string). */
export type TransferParams = { token: Address; native: boolean; amount: string; to: Address }

/** A plain ETH send or an ERC-20 `transfer`: one transaction. */
export const transferPlanner: WalletOpPlanner = {
  plan({ params }) {
    const p = params as TransferParams
    const amount = BigInt(p.amount)
    if (p.native) return [{ kind: 'transfer', to: p.to, value: amount }]
    return [{ kind: 'transfer', to: p.token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [p.to, amount] }) }]
  },
}
