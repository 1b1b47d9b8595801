import type pg from 'pg'
import type { ChainHandle } from './chain.ts'
import { chainUnavailable } from './priceReader.ts'
import { newDepositKey } from './depositWallet.ts'
import { createDepositsRepository } from '../db/deposits.repository.ts'
import type { GetDepositInfoDeps } from '../../domain/billing/getDepositInfo.ts'

/**
 * Each account's deposit address (made on first use, its key encrypted with the wallet master
 * key), and the ports of the deposit use case (src/domain/billing/getDepositInfo.ts).
 *
 * @example
 * const deposits = createDepositServices({ pool, chain, masterKey, confirmations: 2 })
 * await getDepositInfo(deposits.ports, { accountId })
 */
export function createDepositServices({ pool, chain, masterKey, confirmations }: { pool: pg.Pool; chain: ChainHandle; masterKey: Buffer; confirmations: number }) {
  const { quoteAssets, contracts } = chain.manifest
  const usdcDecimals = quoteAssets.USDC?.decimals ?? 6
  const repo = createDepositsRepository(pool, { chainId: chain.chainId, decimals: { ETH: 18, USDC: usdcDecimals } })
  const address = (accountId: string) => repo.address(accountId, (id) => newDepositKey(masterKey, id))
  const head = async () => Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }).catch((err: unknown) => { throw chainUnavailable(err) }))
  const ports: GetDepositInfoDeps = {
    terms: { chainId: chain.chainId, confirmations, usdc: { address: contracts.usdc, decimals: usdcDecimals } },
    depositAddress: address,
    pendingDeposits: async (accountId: string) => repo.pending(accountId, await head()),
  }
  return { address, ports }
}
