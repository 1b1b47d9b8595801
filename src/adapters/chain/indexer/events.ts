import { getAbiItem } from 'viem'
import {
  AmmPairArtifact,
  BondingCurveLaunchpadArtifact,
  FeeLockerArtifact,
  InstantPoolLauncherArtifact,
  SelfFundedTokenArtifact,
} from '../../../dev/artifacts/index.ts'

/** venue-a (BondingCurveLaunchpad). */
export const launchpadEvents = [
  getAbiItem({ abi: BondingCurveLaunchpadArtifact.abi, name: 'TokenCreated' }),
  getAbiItem({ abi: BondingCurveLaunchpadArtifact.abi, name: 'Trade' }),
  getAbiItem({ abi: BondingCurveLaunchpadArtifact.abi, name: 'Graduated' }),
  getAbiItem({ abi: BondingCurveLaunchpadArtifact.abi, name: 'CreatorFeesClaimed' }),
] as const
/** venue-b (InstantPoolLauncher). */
export const launcherEvents = [getAbiItem({ abi: InstantPoolLauncherArtifact.abi, name: 'PoolLaunched' })] as const
export const lockerEvents = [
  getAbiItem({ abi: FeeLockerArtifact.abi, name: 'FeesAccrued' }),
  getAbiItem({ abi: FeeLockerArtifact.abi, name: 'CreatorFeesClaimed' }),
] as const
/** Emitted by a SelfFundedToken itself, so read from any address. */
export const selfFundedEvent = getAbiItem({ abi: SelfFundedTokenArtifact.abi, name: 'SelfFundedLaunch' })
export const poolEvents = [getAbiItem({ abi: AmmPairArtifact.abi, name: 'Swap' }), getAbiItem({ abi: AmmPairArtifact.abi, name: 'Sync' })] as const
