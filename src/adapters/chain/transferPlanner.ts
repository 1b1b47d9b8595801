import { encodeFunctionData, erc20Abi } from 'viem'
import type { TransferParams } from '../../domain/wallet/ports.ts'
import type { PlannedTx } from './txSender.ts'
import type { WalletOpPlanner } from './walletOpPorts.ts'

export type { TransferParams }

/** The one transaction of a transfer: a plain ETH send or an ERC-20 `transfer`. */
export function transferTx(p: TransferParams): PlannedTx {
  const amount = BigInt(p.amount)
  if (p.native) return { kind: 'transfer', to: p.to, value: amount }
  return { kind: 'transfer', to: p.token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [p.to, amount] }) }
}

/** A plain ETH send or an ERC-20 `transfer`: one transaction. */
export const transferPlanner: WalletOpPlanner = {
  plan: ({ params }) => [transferTx(params as TransferParams)],
}
