import { getAddress } from 'viem'
import type { ChainHandle } from '../../chain/chain.ts'
import { BondingCurveLaunchpadArtifact, FeeLockerArtifact } from '../../chain/artifacts/index.ts'

/**
 * A creator's fee position on one token, read from the venue's contract: venue-a's launchpad
 * (`creatorFees`: quote asset only) or venue-b's FeeLocker (`getPosition`: quote asset from buys,
 * the launched token itself from sells). Self-funded tokens have no creator fee stream: their
 * pool is a plain pair whose LP is locked, so trades pay only the 0.3% LP fee into the pool.
 */
export type CreatorFeePosition = {
  /** Quote asset base units. */
  earned: bigint
  claimed: bigint
  /** Launched-token base units (venue-b only; zero elsewhere). */
  earnedToken: bigint
  claimedToken: bigint
}

export const NO_FEES: CreatorFeePosition = { earned: 0n, claimed: 0n, earnedToken: 0n, claimedToken: 0n }

/** True for venues whose tokens pay their creator a share of trade fees. */
export const hasCreatorFees = (venue: string): venue is 'venue-a' | 'venue-b' => venue === 'venue-a' || venue === 'venue-b'

/**
 * Reads the creator fee position of a token at `blockNumber` (latest when omitted).
 *
 * @example
 * const p = await readCreatorFees(chain, { address, venue: 'venue-a' })
 * const claimable = p.earned - p.claimed
 */
export async function readCreatorFees(
  chain: ChainHandle,
  token: { address: string; venue: string },
  blockNumber?: bigint,
): Promise<CreatorFeePosition> {
  const client = chain.publicClient
  const address = getAddress(token.address)
  const at = blockNumber === undefined ? {} : { blockNumber }
  if (token.venue === 'venue-a') {
    const [earned, claimed] = await client.readContract({
      address: chain.manifest.contracts.venueA,
      abi: BondingCurveLaunchpadArtifact.abi,
      functionName: 'creatorFees',
      args: [address],
      ...at,
    })
    return { earned, claimed, earnedToken: 0n, claimedToken: 0n }
  }
  if (token.venue === 'venue-b') {
    const p = await client.readContract({
      address: chain.manifest.contracts.feeLocker,
      abi: FeeLockerArtifact.abi,
      functionName: 'getPosition',
      args: [address],
      ...at,
    })
    return { earned: p.quoteFeesEarned, claimed: p.quoteFeesClaimed, earnedToken: p.tokenFeesEarned, claimedToken: p.tokenFeesClaimed }
  }
  return NO_FEES
}

