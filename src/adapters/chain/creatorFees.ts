import { getAddress } from 'viem'
import type { ChainHandle } from './chain.ts'
import { BondingCurveLaunchpadArtifact, FeeLockerArtifact } from '../../dev/artifacts/index.ts'
import type { CreatorFeePosition } from '../../domain/fees/ports.ts'
import { NO_FEES } from '../../domain/fees/feeRules.ts'

/**
 * Reads the creator fee position of a token at `blockNumber` (latest when omitted), from the
 * venue's contract: venue-a's launchpad (`creatorFees`: quote asset only) or venue-b's FeeLocker
 * (`getPosition`: quote asset from buys, the launched token itself from sells). Self-funded
 * tokens have no creator fee stream.
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

