import type pg from 'pg'
import type { ActorRuntime } from '../actors/actorRuntime.ts'
import type { WalletOpInput } from '../actors/walletOp.machine.ts'
import type { WalletDeps } from '../http/appDeps.ts'
import type { ClaimOperations, FeeChain } from '../domain/fees/ports.ts'
import { hasCreatorFees, NO_FEES } from '../domain/fees/feeRules.ts'
import { mapLimit } from '../domain/util/mapLimit.ts'
import { readCreatorFees } from './creatorFees.ts'
import { chainUnavailable, createPriceReader } from './priceReader.ts'
import { assertNoneInFlight, findWalletOp } from './walletOps.ts'

/** Parallel chain reads per request. */
const READ_PARALLEL = 8

/**
 * The chain side of the creator fee ports: fee positions and prices read at one block, and
 * `claim` wallet operations on the actor runtime (planned by src/chain/claimPlanner.ts).
 *
 * @example
 * const { chain: feeChain, operations } = createFeeChainPorts({ pool, wallet, runtime })
 */
export function createFeeChainPorts({ pool, wallet, runtime }: { pool: pg.Pool; wallet: WalletDeps; runtime: ActorRuntime }) {
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

  const operations: ClaimOperations = {
    assertNoneInFlight: (agentId) => assertNoneInFlight(pool, { agentId, kind: 'claim' }),
    async find(opId) {
      const op = await findWalletOp<WalletOpInput['params']>(runtime, opId)
      return op && { ...op, isWalletOp: op.opKind !== undefined }
    },
    // A claim pays the agent's own payout wallet: it spends nothing, so it counts 0 toward the daily cap.
    // Exclusive: a second claim started beside this one would find the same fees and revert.
    // wallet.run waits on the runtime's commits of the operation (runtime.waitFor), it does not poll.
    start: (p) => wallet.run({ ...p, kind: 'claim', usdValue: '0', exclusive: true }),
  }
  return { chain: feeChain, operations }
}
