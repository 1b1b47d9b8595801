import type pg from 'pg'
import type { ChainHandle } from '../../chain/chain.ts'
import { InvalidStateError, NotFoundError, ServiceError, ServiceUnavailableError, ValidationError } from '../errors.ts'
import { DEFAULT_POLICY } from '../agents/policy.ts'
import { PolicyViolationError } from '../agents/policyCheck.ts'
import type { AgentsRepository } from '../agents/ports.ts'
import { NO_FEES, hasCreatorFees, readCreatorFees, type CreatorFeePosition } from './creatorFees.ts'
import { mapLimit } from '../util/mapLimit.ts'
import { chainUnavailable, createPriceReader, type PriceReader } from '../../chain/priceReader.ts'
import { formatAmount, formatUsd, tokenAmountUsd, usdOf } from '../tokens/priceMath.ts'
import { LATEST_PRICE_SQL, indexedBlock, quotePrices, valueOf } from './feeValuation.ts'
import type { ClaimParams } from '../../chain/claimPlanner.ts'
import { assertNoneInFlight } from '../../chain/walletOps.ts'

/** Parallel chain reads per request. */
const READ_PARALLEL = 8
/** Launched tokens have 18 decimals (LaunchToken, SelfFundedToken). */
const TOKEN_DECIMALS = 18

const SELF_FUNDED_NOTE =
  'Self-funded tokens have no creator fee stream: their liquidity is locked in a plain pool and trades pay only the 0.3% LP fee into it.'

export class NothingToClaimError extends ServiceError {
  constructor(message = 'There are no creator fees to claim.') {
    super(message, { code: 'nothing_to_claim', status: 422 })
  }
}

type TokenRow = {
  address: string
  symbol: string
  name: string
  venue: string
  quote_symbol: string
  pool_address: string | null
  creator_address: string
}

export type FeesService = ReturnType<typeof createFeesService>

/**
 * Creator fees of an agent's tokens (read on chain, so they are current to the block), fee
 * claims to the agent's payout wallet, and platform fee totals from the indexer's tables.
 *
 * @example
 * const fees = createFeesService({ pool, chain, agents })
 * const e = await fees.earnings(accountId, agentId)
 * const plan = await fees.planClaim(accountId, agentId)
 */
export function createFeesService({ pool, chain, agents }: { pool: pg.Pool; chain: ChainHandle | undefined; agents: AgentsRepository }) {
  const requireChain = () => {
    if (!chain) throw new ServiceUnavailableError('The chain is not configured.', { code: 'chain_unavailable' })
    return chain
  }
  const quoteDecimals = (c: ChainHandle, symbol: string) => c.manifest.quoteAssets[symbol]?.decimals

  /** The caller's own agent, else 404 (another account's agent is "not found"). */
  const ownAgent = (accountId: string, agentId: string) => agents.getOwned(accountId, agentId)

  async function agentTokens(c: ChainHandle, agentId: string, tokenAddress?: string): Promise<TokenRow[]> {
    const params: unknown[] = [agentId, c.chainId]
    const { rows } = await pool.query<TokenRow>(
      `select address, symbol, name, venue, quote_symbol, pool_address, creator_address from token
        where creator_agent_id = $1 and chain_id = $2 ${tokenAddress ? `and address = $${params.push(tokenAddress)}` : ''}
        order by block_number, address`,
      params,
    )
    return rows
  }

  async function positions(c: ChainHandle, tokens: TokenRow[], block: bigint): Promise<CreatorFeePosition[]> {
    return mapLimit(tokens, READ_PARALLEL, (t) =>
      hasCreatorFees(t.venue) ? readCreatorFees(c, t, block).catch((err) => Promise.reject(chainUnavailable(err))) : Promise.resolve(NO_FEES),
    )
  }

  /** usd18 of a fee position's quote and token sides (null when the quote asset has no price). */
  async function feeUsd(c: ChainHandle, prices: PriceReader, t: TokenRow, quoteAmount: bigint, tokenAmount: bigint): Promise<bigint | null> {
    const decimals = quoteDecimals(c, t.quote_symbol)
    const q = await prices.quote(t.quote_symbol)
    if (!q || decimals === undefined) return null
    let usd = usdOf(quoteAmount, decimals, q.usd18)
    if (tokenAmount > 0n) {
      const m = await prices.launched({ address: t.address, venue: t.venue, quoteSymbol: t.quote_symbol, poolAddress: t.pool_address })
      usd += tokenAmountUsd(tokenAmount, m.price, decimals, q.usd18)
    }
    return usd
  }

  return {
    /**
     * Per token the agent launched: creator fees earned, claimable and claimed (quote asset
     * units; venue-b also in the launched token), with USD values, and totals.
     */
    async earnings(accountId: string, agentId: string) {
      const agent = await ownAgent(accountId, agentId)
      const c = requireChain()
      const tokens = await agentTokens(c, agentId)
      const prices = await createPriceReader(c)
      const fees = await positions(c, tokens, prices.block)
      let earnedUsd = 0n
      let claimableUsd = 0n
      let claimedUsd = 0n
      const rows = await mapLimit(tokens.map((t, i) => ({ t, f: fees[i]! })), READ_PARALLEL, async ({ t, f }) => {
        const decimals = quoteDecimals(c, t.quote_symbol) ?? 18
        const claimable = f.earned - f.claimed
        const claimableToken = f.earnedToken - f.claimedToken
        const [eUsd, cUsd, dUsd] = [
          await feeUsd(c, prices, t, f.earned, f.earnedToken),
          await feeUsd(c, prices, t, claimable, claimableToken),
          await feeUsd(c, prices, t, f.claimed, f.claimedToken),
        ]
        earnedUsd += eUsd ?? 0n
        claimableUsd += cUsd ?? 0n
        claimedUsd += dUsd ?? 0n
        const stream = hasCreatorFees(t.venue)
        return {
          tokenAddress: t.address,
          symbol: t.symbol,
          name: t.name,
          venue: t.venue,
          quote: t.quote_symbol,
          quoteDecimals: decimals,
          feeStream: stream ? ('creator' as const) : ('none' as const),
          earned: formatAmount(f.earned, decimals),
          claimable: formatAmount(claimable, decimals),
          claimed: formatAmount(f.claimed, decimals),
          earnedToken: formatAmount(f.earnedToken, TOKEN_DECIMALS),
          claimableToken: formatAmount(claimableToken, TOKEN_DECIMALS),
          claimedToken: formatAmount(f.claimedToken, TOKEN_DECIMALS),
          earnedUsd: eUsd === null ? null : formatUsd(eUsd),
          claimableUsd: cUsd === null ? null : formatUsd(cUsd),
          claimedUsd: dUsd === null ? null : formatUsd(dUsd),
          note: stream ? null : SELF_FUNDED_NOTE,
        }
      })
      return {
        agentId,
        payoutAddress: agent.payoutWallet ?? agent.walletAddress,
        tokens: rows,
        earnedUsd: formatUsd(earnedUsd),
        claimableUsd: formatUsd(claimableUsd),
        claimedUsd: formatUsd(claimedUsd),
        block: Number(prices.block),
      }
    },

    /**
     * What a claim would send: one entry per token of the agent with unclaimed fees, all to
     * the agent's payout wallet (its own wallet when none is set). Throws 404 for another
     * account's agent, 403 when its policy is paused, 409 `claim_in_progress` while another claim
     * of the agent is in flight, 422 `nothing_to_claim`.
     */
    async planClaim(accountId: string, agentId: string, tokenAddress?: string): Promise<ClaimParams & { claimableUsd: string }> {
      const agent = await ownAgent(accountId, agentId)
      if (agent.status === 'deleted') throw new InvalidStateError({ event: 'claim fees', state: 'deleted' })
      const policy = { ...DEFAULT_POLICY, ...agent.policy }
      if (policy.paused) throw new PolicyViolationError({ rule: 'paused', message: 'The agent is paused by its policy kill switch.' })
      const c = requireChain()
      // A second claim planned while one is in flight would read the same unclaimed fees and revert.
      // This early answer only saves the planning: the check that holds is made again under the
      // agent's lock when the operation starts (`exclusive` in runWalletOp).
      await assertNoneInFlight(pool, { agentId, kind: 'claim' })
      const tokens = await agentTokens(c, agentId, tokenAddress)
      if (tokenAddress && tokens.length === 0) throw new ValidationError({ tokenAddress: 'Not a token this agent launched.' })
      if (tokenAddress && !hasCreatorFees(tokens[0]!.venue)) throw new NothingToClaimError(SELF_FUNDED_NOTE)
      // Only the on-chain creator can claim; a token row is ours by launch, its creator by the chain.
      const claimable = tokens.filter((t) => hasCreatorFees(t.venue) && t.creator_address.toLowerCase() === agent.walletAddress.toLowerCase())
      const prices = await createPriceReader(c)
      const fees = await positions(c, claimable, prices.block)
      const to = (agent.payoutWallet ?? agent.walletAddress).toLowerCase()
      const claims: ClaimParams['claims'] = []
      let usd = 0n
      for (const [i, t] of claimable.entries()) {
        const f = fees[i]!
        const amount = f.earned - f.claimed
        const tokenAmount = f.earnedToken - f.claimedToken
        if (amount === 0n && tokenAmount === 0n) continue
        const decimals = quoteDecimals(c, t.quote_symbol) ?? 18
        usd += (await feeUsd(c, prices, t, amount, tokenAmount)) ?? 0n
        claims.push({
          tokenAddress: t.address,
          symbol: t.symbol,
          venue: t.venue as 'venue-a' | 'venue-b',
          quote: t.quote_symbol,
          quoteDecimals: decimals,
          to,
          expectedAmount: formatAmount(amount, decimals),
          expectedTokenAmount: formatAmount(tokenAmount, TOKEN_DECIMALS),
        })
      }
      if (claims.length === 0) {
        throw new NothingToClaimError(tokenAddress ? 'This token has no unclaimed creator fees.' : 'None of this agent\'s tokens has unclaimed creator fees.')
      }
      return { claims, claimableUsd: formatUsd(usd) }
    },

    /**
     * Platform fee totals by venue from the indexed trades (creator and platform halves, in USD:
     * quote-side fees at the quote asset's price now, token-side fees at the token's latest
     * indexed price), all time and over the last 24 hours.
     */
    async stats() {
      const prices = await quotePrices(chain)
      const { rows } = await pool.query<{
        venue: string; quote_symbol: string; fee_asset: 'quote' | 'token'; price: string | null
        trades: string; creator: string; platform: string; trades_24h: string; creator_24h: string; platform_24h: string
      }>(
        `with agg as (
           select tr.token_address, tr.venue, tr.fee_asset, count(*) as trades,
                  sum(tr.creator_fee) as creator, sum(tr.platform_fee) as platform,
                  count(*) filter (where tr.at > now() - interval '24 hours') as trades_24h,
                  coalesce(sum(tr.creator_fee) filter (where tr.at > now() - interval '24 hours'), 0) as creator_24h,
                  coalesce(sum(tr.platform_fee) filter (where tr.at > now() - interval '24 hours'), 0) as platform_24h
             from trade tr ${chain ? 'where tr.chain_id = $1' : ''}
            group by tr.token_address, tr.venue, tr.fee_asset)
         select agg.venue, t.quote_symbol, agg.fee_asset, case when agg.fee_asset = 'token' then ${LATEST_PRICE_SQL} end::text as price,
                agg.trades::text, agg.creator::text, agg.platform::text, agg.trades_24h::text, agg.creator_24h::text, agg.platform_24h::text
           from agg join token t on t.address = agg.token_address`,
        chain ? [chain.chainId] : [],
      )
      type Sums = { trades: number; creator: bigint; platform: bigint }
      const zero = (): Sums => ({ trades: 0, creator: 0n, platform: 0n })
      const venues = new Map<string, { all: Sums; day: Sums }>(
        ['venue-a', 'venue-b', 'self-funded'].map((v) => [v, { all: zero(), day: zero() }]),
      )
      let unpriced = 0
      for (const r of rows) {
        const v = venues.get(r.venue) ?? { all: zero(), day: zero() }
        venues.set(r.venue, v)
        const price = r.price === null ? null : BigInt(r.price)
        const usd = (amount: string) => valueOf(prices, { amount: BigInt(amount), asset: r.fee_asset, quoteSymbol: r.quote_symbol, price })
        const [c, p, c24, p24] = [usd(r.creator), usd(r.platform), usd(r.creator_24h), usd(r.platform_24h)]
        if (c === null) unpriced++
        v.all.trades += Number(r.trades)
        v.all.creator += c ?? 0n
        v.all.platform += p ?? 0n
        v.day.trades += Number(r.trades_24h)
        v.day.creator += c24 ?? 0n
        v.day.platform += p24 ?? 0n
      }
      const view = (s: Sums) => ({
        trades: s.trades,
        creatorFeesUsd: formatUsd(s.creator),
        platformFeesUsd: formatUsd(s.platform),
        totalFeesUsd: formatUsd(s.creator + s.platform),
      })
      const total = { all: zero(), day: zero() }
      for (const v of venues.values()) {
        for (const k of ['all', 'day'] as const) {
          total[k].trades += v[k].trades
          total[k].creator += v[k].creator
          total[k].platform += v[k].platform
        }
      }
      return {
        venues: [...venues.entries()].map(([venue, v]) => ({ venue, ...view(v.all), last24h: view(v.day) })),
        totals: { ...view(total.all), last24h: view(total.day) },
        /** Token groups left out because their quote asset has no USD price. */
        unpricedGroups: unpriced,
        indexedBlock: await indexedBlock(pool, chain?.chainId),
      }
    },
  }
}
