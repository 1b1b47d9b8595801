import type pg from 'pg'
import type { WalletDeps } from './walletDeps.ts'
import type { ClaimOperations, FeeChain } from '../../domain/fees/ports.ts'
import { hasCreatorFees, NO_FEES } from '../../domain/fees/feeRules.ts'
import { mapLimit } from '../../domain/util/mapLimit.ts'
import { readCreatorFees } from './creatorFees.ts'
import { chainUnavailable, createPriceReader } from './priceReader.ts'

/** Parallel chain reads per request. */
const READ_PARALLEL = 8

/**
 * The chain side of the creator fee ports: fee positions and prices read at one block. (`claim`
 * wallet operations are actors, src/actors/walletOp/walletOps.ts, planned by src/adapters/chain/claimPlanner.ts.)
 *
 * @example
 * const { chain: feeChain } = createFeeChainPorts({ pool, wallet })
 */
export function createFeeChainPorts({ pool, wallet }: { pool: pg.Pool; wallet: WalletDeps }) {
  const { chain } = wallet
  const feeChain: FeeChain = {
    chainId: chain.chainId,
    quoteDecimals: (symbol) => chain.manifest.quoteAssets[symbol]?.decimals,
    atLatestBlock: () => createPriceReader(chain),
    positions: (tokens, block) =>
      mapLimit(tokens, READ_PARALLEL, (t) =>
        hasCreatorFees(t.venue) ? readCreatorFees(chain, t, block).catch((err) => Promise.reject(chainUnavailable(err))) : Promise.resolve(NO_FEES),
      ),
  }

  return { chain: feeChain }
}
