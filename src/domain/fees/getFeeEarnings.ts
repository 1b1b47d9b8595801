import { ChainNotConfiguredError } from '../errors.ts'
import { mapLimit } from '../util/mapLimit.ts'
import { formatAmount, formatUsd } from '../tokens/priceMath.ts'
import type { FeePorts } from './ports.ts'
import type { GetFeeEarningsInput } from './fees.schema.ts'
import { hasCreatorFees, SELF_FUNDED_NOTE, TOKEN_DECIMALS, unclaimed } from './feeRules.ts'
import { feeUsd } from './feeUsd.ts'

export type GetFeeEarningsDeps = Pick<FeePorts, 'agents' | 'tokens' | 'chain'>

/** Parallel chain reads per request. */
const READ_PARALLEL = 8

/**
 * Per token the agent launched: creator fees earned, claimable and claimed (quote asset units;
 * venue-b also in the launched token), with USD values, and totals; read on chain at one block,
 * so they are current to that block. 404 for another account's agent.
 *
 * @example
 * const e = await getFeeEarnings(deps, { accountId, agentId })
 * e.claimableUsd // '15.00'
 */
export async function getFeeEarnings(deps: GetFeeEarningsDeps, { accountId, agentId }: GetFeeEarningsInput) {
  const agent = await deps.agents.getOwned(accountId, agentId)
  const chain = deps.chain
  if (!chain) throw new ChainNotConfiguredError()
  const tokens = await deps.tokens.ofAgent({ chainId: chain.chainId, agentId })
  const at = await chain.atLatestBlock()
  const fees = await chain.positions(tokens, at.block)
  let earnedUsd = 0n
  let claimableUsd = 0n
  let claimedUsd = 0n
  const rows = await mapLimit(tokens.map((t, i) => ({ t, f: fees[i]! })), READ_PARALLEL, async ({ t, f }) => {
    const decimals = chain.quoteDecimals(t.quoteSymbol)
    const shown = decimals ?? 18
    const left = unclaimed(f)
    const [eUsd, cUsd, dUsd] = [
      await feeUsd(at, decimals, t, f.earned, f.earnedToken),
      await feeUsd(at, decimals, t, left.quote, left.token),
      await feeUsd(at, decimals, t, f.claimed, f.claimedToken),
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
      quote: t.quoteSymbol,
      quoteDecimals: shown,
      feeStream: stream ? ('creator' as const) : ('none' as const),
      earned: formatAmount(f.earned, shown),
      claimable: formatAmount(left.quote, shown),
      claimed: formatAmount(f.claimed, shown),
      earnedToken: formatAmount(f.earnedToken, TOKEN_DECIMALS),
      claimableToken: formatAmount(left.token, TOKEN_DECIMALS),
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
    block: Number(at.block),
  }
}
