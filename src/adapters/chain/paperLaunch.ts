import { formatUnits, type Address } from 'viem'
import type { ChainHandle } from './chain.ts'
import { LAUNCH_SUPPLY, VENUE_B_STARTING_MARKET_CAP, parseAmount, quoteAsset, seedOf } from './launchTx.ts'
import { paperToken, type PaperPool, type PaperStore } from '../db/paper.store.ts'
import { BondingCurveLaunchpadArtifact } from '../../dev/artifacts/index.ts'
import { InsufficientFundsError } from '../../domain/errors.ts'
import type { LaunchInput } from '../../domain/launches/launch.schema.ts'
import { paperTokenAddress } from '../../domain/paper/paperAddress.ts'

/** A paper launch's fill as recorded: `txHash` is `paper:<launchId>` (no transaction exists). */
export type PaperLaunchFill = { txHash: string; tokenAddress: Address; blockNumber: string; seed: { token: string; amount: string } | null }

/** The fee of a venue's pool (basis points): venue-a's curve and venue-b's pool take 1 %, a self-funded pool 0.3 %. */
const FEE_BPS: Record<string, number> = { 'venue-a': 100, 'venue-b': 100, 'self-funded': 30 }

/**
 * A paper agent's launch (docs/api.md, "Paper agents"): the same launch flow, simulated. The
 * virtual token's address is derived from the launch id (src/domain/paper/paperAddress.ts); its
 * virtual pool holds the whole supply against the quote the venue would open it with: a
 * self-funded launch's seed (debited from the paper ledger), venue-b's starting market cap,
 * venue-a's curve's starting market cap (read from the launchpad at the block). Nothing is
 * signed or sent: the wallet's nonce never moves.
 */
export function createPaperLaunches({ chain, store }: { chain: ChainHandle; store: PaperStore }) {
  /** The seed a self-funded launch takes from the paper ledger, or null. */
  const seedLeg = (ctx: LaunchInput) => (ctx.venue === 'self-funded' ? { token: paperToken(quoteAsset(chain.manifest, ctx.quote)), amount: seedOf(chain.manifest, ctx) } : null)
  const short = (ctx: LaunchInput, held: bigint, needed: bigint) => {
    const q = quoteAsset(chain.manifest, ctx.quote)
    return new InsufficientFundsError({ message: `The paper agent holds ${formatUnits(held, q.decimals)} ${ctx.quote}; the seed needs ${formatUnits(needed, q.decimals)}.` })
  }

  /** The quote the virtual pool opens with, in the quote asset's base units. */
  async function openingQuote(ctx: LaunchInput): Promise<bigint> {
    const q = quoteAsset(chain.manifest, ctx.quote)
    if (ctx.venue === 'self-funded') return seedOf(chain.manifest, ctx)
    if (ctx.venue === 'venue-b') return parseAmount(VENUE_B_STARTING_MARKET_CAP[ctx.quote] ?? '1', q.decimals)
    const cfg = (await chain.publicClient.readContract({
      address: chain.manifest.contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi, functionName: 'quoteConfig', args: [q.address],
    })) as readonly [boolean, bigint, bigint]
    return cfg[1]
  }

  return {
    isPaper: (agentId: string) => store.isPaper(agentId),
    /** The token address a paper launch makes. */
    tokenAddress: (launchId: string): Address => paperTokenAddress(launchId),
    /** Checks the paper ledger holds a self-funded seed (`insufficient_funds`); nothing is recorded. */
    async check(ctx: LaunchInput): Promise<void> {
      const seed = seedLeg(ctx)
      if (!seed) return
      const held = (await store.balances(ctx.agentId)).get(seed.token) ?? 0n
      if (held < seed.amount) throw short(ctx, held, seed.amount)
    },
    /** Fills the launch once (a retry finds the first fill): the seed debited, the virtual pool recorded. */
    async fill(ctx: LaunchInput): Promise<PaperLaunchFill> {
      const known = await store.fillOf(ctx.launchId)
      if (known) return known as PaperLaunchFill
      const blockNumber = await chain.publicClient.getBlockNumber()
      const token = paperTokenAddress(ctx.launchId)
      const seed = seedLeg(ctx)
      const pool: PaperPool = {
        token, venue: ctx.venue, symbol: ctx.symbol, name: ctx.name, quoteSymbol: ctx.quote,
        quoteReserve: await openingQuote(ctx), tokenReserve: LAUNCH_SUPPLY, feeBps: FEE_BPS[ctx.venue] ?? 100, blockNumber,
      }
      const result = {
        paper: true, txHash: `paper:${ctx.launchId}`, tokenAddress: token, blockNumber: blockNumber.toString(),
        // The PnL ledger's seed is keyed as a live launch's (the quote asset's address: WETH's for ETH).
        seed: seed ? { token: quoteAsset(chain.manifest, ctx.quote).address.toLowerCase(), amount: seed.amount.toString() } : null,
      }
      const out = await store.recordLaunch({ launchId: ctx.launchId, agentId: ctx.agentId, seed, pool, result })
      if (!out.ok) throw short(ctx, out.held, out.short.amount)
      return out.result as PaperLaunchFill
    },
    /** The fill recorded for a launch, or undefined. */
    filled: (launchId: string) => store.fillOf(launchId) as Promise<PaperLaunchFill | undefined>,
  }
}
export type PaperLaunches = ReturnType<typeof createPaperLaunches>
