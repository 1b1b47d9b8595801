import type pg from 'pg'
import { erc20Abi, parseEventLogs, type Address, type LocalAccount, type TransactionReceipt } from 'viem'
import type { Logger } from '../../logger.ts'
import type { EffectHandler } from '../runtime/index.ts'
import { upsertLaunchedToken } from '../../adapters/db/tokens.store.ts'
import type { LaunchInput } from '../../domain/launches/launch.schema.ts'
import { ServiceError } from '../../domain/errors.ts'
import type { ChainHandle } from '../../adapters/chain/chain.ts'
import type { TxSender } from '../../adapters/chain/txSender.ts'
import { launchOutcome, planLaunch, quoteAsset, seedOf, LAUNCH_SUPPLY } from '../../adapters/chain/launchTx.ts'
import { simulateLaunch } from '../../adapters/chain/launchSimulation.ts'
import { gasCost, PAPER_TX_PREFIX } from '../walletOp/walletOp.effects.ts'
import type { PaperLaunches } from '../../adapters/chain/paperLaunch.ts'

type LaunchCtx = LaunchInput & { txHash: string | null }

export type LaunchEffectsDeps = {
  pool: pg.Pool
  chain: ChainHandle
  sender: TxSender
  loadAccount(agentId: string): Promise<LocalAccount>
  logger: Logger
  /** Present: a paper agent's launch is filled by it (a virtual token and pool), never signed or sent. */
  paper?: PaperLaunches | undefined
}

/**
 * What the PnL ledger counts of a confirmed launch: the gas its transactions paid (wei, and USD
 * at its block's ETH price), the creator allocation (the new token its transactions delivered
 * to the wallet, base units: 0 on the reference venues, whose whole supply goes to the curve or
 * the pool) and a self-funded launch's seed (the quote asset locked into its pool).
 */
async function launchLedger(chain: ChainHandle, { ctx, receipts, tokenAddress, owner }: { ctx: LaunchCtx; receipts: readonly TransactionReceipt[]; tokenAddress: Address; owner: Address }) {
  const logs = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipts.flatMap((r) => r.logs) })
  const allocation = logs
    .filter((l) => l.address.toLowerCase() === tokenAddress.toLowerCase() && l.args.to.toLowerCase() === owner.toLowerCase())
    .reduce((s, l) => s + l.args.value, 0n)
  const seed = ctx.venue === 'self-funded' ? { token: quoteAsset(chain.manifest, ctx.quote).address.toLowerCase(), amount: seedOf(chain.manifest, ctx).toString() } : null
  return { ...(await gasCost(chain, receipts)), allocation: allocation.toString(), seed }
}

const rejected = (code: string, message: string) => ({ type: 'launch.rejected', error: { code, message } })

/** A refusal the user must act on (funds, revert) ends the launch as failed; anything else is retried. */
function asRejection(err: unknown) {
  if (err instanceof ServiceError && err.status < 500) return rejected(err.code, err.message)
  return undefined
}

/**
 * The launch machine's effects. Each is safe to run twice: the submit effect's transactions are
 * keyed by the effect id in the outbox, so a retry after a crash re-broadcasts what was signed.
 */
export function createLaunchEffects(deps: LaunchEffectsDeps): Record<string, EffectHandler> {
  const { pool, chain, sender } = deps

  return {
    async 'launch.simulate'(effect, effectCtx) {
      const ctx = await effectCtx.context<LaunchCtx>()
      if (deps.paper && (await deps.paper.isPaper(ctx.agentId))) {
        try {
          await deps.paper.check(ctx)
          return { type: 'launch.simulated', gas: '0' }
        } catch (err) {
          const r = asRejection(err)
          if (r) return r
          throw err
        }
      }
      const account = await deps.loadAccount(ctx.agentId)
      try {
        const { gas } = await simulateLaunch(deps, ctx, account)
        return { type: 'launch.simulated', gas: gas.toString() }
      } catch (err) {
        const r = asRejection(err)
        if (r) return r
        throw err
      }
    },

    async 'launch.submit'(effect, effectCtx) {
      const ctx = await effectCtx.context<LaunchCtx>()
      // A paper agent's launch is filled into its virtual ledger at this block, never signed or sent.
      if (deps.paper && (await deps.paper.isPaper(ctx.agentId))) {
        try {
          return { type: 'launch.submitted', txHash: (await deps.paper.fill(ctx)).txHash }
        } catch (err) {
          const r = asRejection(err)
          if (r) return r
          throw err
        }
      }
      const account = await deps.loadAccount(ctx.agentId)
      try {
        const sent = await sender.send(
          { id: effect.id, accountId: ctx.accountId, agentId: ctx.agentId, effectId: effect.id, account },
          (firstNonce) => planLaunch(chain.manifest, ctx, account.address, firstNonce),
        )
        return { type: 'launch.submitted', txHash: sent.at(-1)!.hash }
      } catch (err) {
        const r = asRejection(err)
        if (r) return r
        throw err
      }
    },

    async 'launch.confirm'(effect, effectCtx) {
      const ctx = await effectCtx.context<LaunchCtx>()
      const txHash = (effect.params as { txHash: string }).txHash
      if (txHash.startsWith(PAPER_TX_PREFIX)) {
        const fill = await deps.paper?.filled(ctx.launchId)
        if (!fill) throw new Error(`no paper fill recorded for launch ${ctx.launchId}`)
        // No pool contract exists: the virtual pool is the paper ledger's (paper_pool), keyed by the token.
        return {
          type: 'launch.confirmed',
          tokenAddress: fill.tokenAddress,
          poolAddress: null,
          blockNumber: fill.blockNumber,
          ledger: { gasWei: '0', gasUsd: '0.00', allocation: '0', seed: fill.seed },
        }
      }
      const account = await deps.loadAccount(ctx.agentId)
      // Every transaction of the request (an approval, then the launch) must land.
      const receipts = await sender.confirmRequest((effect.params as { txHash: `0x${string}` }).txHash, account)
      const receipt = receipts.at(-1)!
      if (receipt.status !== 'success') return rejected('transaction_reverted', `Transaction ${receipt.transactionHash} reverted.`)
      const { tokenAddress, poolAddress } = launchOutcome(ctx.venue, receipt)
      const q = quoteAsset(chain.manifest, ctx.quote)
      await upsertLaunchedToken(pool, {
        address: tokenAddress.toLowerCase(),
        chainId: chain.chainId,
        symbol: ctx.symbol,
        name: ctx.name,
        venue: ctx.venue,
        quoteSymbol: ctx.quote,
        quoteAddress: q.address.toLowerCase(),
        creatorAddress: account.address.toLowerCase(),
        creatorAgentId: ctx.agentId,
        launchId: ctx.launchId,
        poolAddress: poolAddress?.toLowerCase() ?? null,
        totalSupply: LAUNCH_SUPPLY.toString(),
        description: ctx.description,
        logoUrl: ctx.logoUrl,
        blockNumber: receipt.blockNumber.toString(),
        txHash: receipt.transactionHash,
      })
      return {
        type: 'launch.confirmed',
        tokenAddress: tokenAddress.toLowerCase() as Address,
        poolAddress: poolAddress?.toLowerCase() ?? null,
        blockNumber: receipt.blockNumber.toString(),
        ledger: await launchLedger(chain, { ctx, receipts, tokenAddress, owner: account.address }),
      }
    },
  }
}
