import type { LocalAccount } from 'viem'
import type { ChainHandle } from './chain.ts'
import type { TxSender } from './txSender.ts'
import type { WalletOpPlanner } from './walletOpPorts.ts'

/** The chain's side of agent wallets (present when a chain is): the chain, the outbox, the planners, the keys. */
export type WalletDeps = {
  chain: ChainHandle
  sender: TxSender
  /** Register a planner per operation kind ('swap', 'transfer', 'claim'). */
  planners: Record<string, WalletOpPlanner>
  loadAccount(agentId: string): Promise<LocalAccount>
}
