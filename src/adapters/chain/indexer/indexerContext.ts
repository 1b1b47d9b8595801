import type pg from 'pg'
import { BlockNotFoundError, erc20Abi, getAddress, type Hex, type PublicClient } from 'viem'
import type { Logger } from '../../../logger.ts'
import type { ChainHandle } from '../chain.ts'
import type { DeploymentManifest } from '../manifest.ts'
import type { CreditsRepository } from '../../../domain/billing/ports.ts'
import { referencePoolsOf, type ReferencePool } from './referencePools.ts'

/** What every part of the indexer reads: the database, the chain, and the deployment's addresses (lower case). */
export type IndexerContext = {
  pool: pg.Pool
  client: PublicClient
  chainId: number
  startBlock: number
  contracts: DeploymentManifest['contracts']
  venueA: string
  venueB: string
  feeLocker: string
  quoteSymbols: Map<string, string>
  /** Decimals of each quote asset, by symbol. */
  quoteDecimals: Map<string, number>
  /** The deployment's own pools followed beside launched tokens' (WETH/USDC, the stocks'). */
  referencePools: ReferencePool[]
  /** Recent block hashes kept to find a common ancestor. */
  reorgDepth: number
  log: Logger
  /** The chain, for prices at a block (transfers into agent wallets, indexer/agentTransfers.ts). */
  chain: ChainHandle
  /** Credit deposits (indexer/deposits.ts, creditDeposits.ts); absent = deposits are not followed. */
  deposits?: DepositIndexing | undefined
}

/** What crediting deposits needs: the confirmations, the ledger, and the chain for prices at a block. */
export type DepositIndexing = { confirmations: number; credits: CreditsRepository; chain: ChainHandle }

export const lower = (a: string) => a.toLowerCase()

/** Parallel RPC reads. */
export const RPC_PARALLEL = 16

export function createIndexerContext({ pool, chain, logger, reorgDepth, deposits }: {
  pool: pg.Pool; chain: ChainHandle; logger: Logger; reorgDepth: number; deposits?: Omit<DepositIndexing, 'chain'> | undefined
}): IndexerContext {
  const { contracts } = chain.manifest
  return {
    pool,
    client: chain.publicClient,
    chainId: chain.chainId,
    startBlock: chain.manifest.startBlock,
    contracts,
    venueA: lower(contracts.venueA),
    venueB: lower(contracts.venueB),
    feeLocker: lower(contracts.feeLocker),
    quoteSymbols: new Map(Object.entries(chain.manifest.quoteAssets).map(([symbol, q]) => [lower(q.address), symbol])),
    quoteDecimals: new Map(Object.entries(chain.manifest.quoteAssets).map(([symbol, q]) => [symbol, q.decimals])),
    referencePools: referencePoolsOf(chain),
    reorgDepth,
    log: logger.child({ component: 'indexer' }),
    chain,
    deposits: deposits && { ...deposits, chain },
  }
}

/** Hash of block `n` on the chain now, or null when there is no such block. */
export async function chainHash(client: PublicClient, n: number): Promise<Hex | null> {
  try {
    const b = await client.getBlock({ blockNumber: BigInt(n) })
    return b.hash
  } catch (err) {
    if (err instanceof BlockNotFoundError) return null
    throw err
  }
}

/** The block the index has reached (the start block minus one before the first range). */
export async function readCheckpoint({ pool, chainId, startBlock }: IndexerContext): Promise<number> {
  await pool.query(`insert into chain_checkpoint (chain_id, block_number) values ($1, $2) on conflict do nothing`, [chainId, startBlock - 1])
  const { rows } = await pool.query<{ block_number: string }>(`select block_number from chain_checkpoint where chain_id = $1`, [chainId])
  return Number(rows[0]!.block_number)
}

/** Symbol of a quote asset: the manifest's name for it, else the token's own `symbol()`. */
export async function quoteSymbolOf({ client, quoteSymbols }: IndexerContext, quote: string, blockNumber: bigint): Promise<string> {
  const known = quoteSymbols.get(quote)
  if (known) return known
  return client.readContract({ address: getAddress(quote), abi: erc20Abi, functionName: 'symbol', blockNumber }).catch(() => '?')
}
