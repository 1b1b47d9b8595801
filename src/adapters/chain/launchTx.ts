import {
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  parseEther,
  parseEventLogs,
  parseUnits,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem'
import type { DeploymentManifest } from './manifest.ts'
import {
  BondingCurveLaunchpadArtifact,
  InstantPoolLauncherArtifact,
  SelfFundedTokenArtifact,
  MockUSDCArtifact,
} from '../../dev/artifacts/index.ts'
import type { LaunchVenue } from '../../domain/launches/launch.schema.ts'

export const LAUNCH_SUPPLY = 1_000_000_000n * 10n ** 18n

/** venue-b opens pools at this market cap (quote units), comfortably above the venue's minimum. */
export const VENUE_B_STARTING_MARKET_CAP: Record<string, string> = { ETH: '5', USDC: '15000' }
/** Self-funded pools are seeded with this much of the agent's own quote asset unless told otherwise (under the default $1000 per-trade cap). */
export const SELF_FUNDED_DEFAULT_SEED: Record<string, string> = { ETH: '0.25', USDC: '500' }
/** Generous gas for a self-funded deployment that cannot be estimated before its approval is mined. */
const SELF_FUNDED_DEPLOY_GAS = 4_000_000n

export type LaunchParams = { venue: LaunchVenue; symbol: string; name: string; quote: string; seedAmount: string | null }

export type PlannedTx = { to?: Address; data: Hex; value?: bigint; gas?: bigint; kind: string }

export function quoteAsset(manifest: DeploymentManifest, symbol: string) {
  const q = manifest.quoteAssets[symbol]
  if (!q) throw new Error(`unknown quote asset ${symbol}`)
  return q
}

export function parseAmount(amount: string, decimals: number): bigint {
  return decimals === 18 ? parseEther(amount) : parseUnits(amount, decimals)
}

/** The seed of a self-funded launch, in the quote asset's base units. */
export function seedOf(manifest: DeploymentManifest, p: LaunchParams): bigint {
  const q = quoteAsset(manifest, p.quote)
  return parseAmount(p.seedAmount ?? SELF_FUNDED_DEFAULT_SEED[p.quote] ?? '1', q.decimals)
}

/**
 * The transactions of a launch from the agent's wallet, given the first nonce they will take.
 * venue-a and venue-b are one call each; self-funded deploys the token (payable with ETH, or
 * after approving the token's predicted address for an ERC-20 quote: two transactions).
 */
export function planLaunch(manifest: DeploymentManifest, p: LaunchParams, from: Address, firstNonce: number): PlannedTx[] {
  const q = quoteAsset(manifest, p.quote)
  if (p.venue === 'venue-a') {
    return [{
      kind: 'launch',
      to: manifest.contracts.venueA,
      data: encodeFunctionData({ abi: BondingCurveLaunchpadArtifact.abi, functionName: 'createToken', args: [p.name, p.symbol, q.address] }),
    }]
  }
  if (p.venue === 'venue-b') {
    const cap = parseAmount(VENUE_B_STARTING_MARKET_CAP[p.quote] ?? '1', q.decimals)
    return [{
      kind: 'launch',
      to: manifest.contracts.venueB,
      data: encodeFunctionData({ abi: InstantPoolLauncherArtifact.abi, functionName: 'launch', args: [p.name, p.symbol, q.address, cap] }),
    }]
  }
  const seed = seedOf(manifest, p)
  const deploy = encodeDeployData({
    abi: SelfFundedTokenArtifact.abi,
    bytecode: SelfFundedTokenArtifact.bytecode,
    args: [p.name, p.symbol, LAUNCH_SUPPLY, manifest.contracts.factory, manifest.contracts.weth, q.address, seed],
  })
  if (q.native) return [{ kind: 'launch', data: deploy, value: seed }]
  const predicted = getContractAddress({ from, nonce: BigInt(firstNonce + 1) })
  return [
    {
      kind: 'launch.approve',
      to: q.address,
      data: encodeFunctionData({ abi: MockUSDCArtifact.abi, functionName: 'approve', args: [predicted, seed] }),
    },
    { kind: 'launch', data: deploy, gas: SELF_FUNDED_DEPLOY_GAS },
  ]
}

/** Reads the token and pool a launch created from its receipt's events. */
export function launchOutcome(venue: LaunchVenue, receipt: TransactionReceipt): { tokenAddress: Address; poolAddress: Address | null } {
  if (venue === 'venue-a') {
    const [log] = parseEventLogs({ abi: BondingCurveLaunchpadArtifact.abi, eventName: 'TokenCreated', logs: receipt.logs })
    if (!log) throw new Error('no TokenCreated event in the launch receipt')
    return { tokenAddress: log.args.token, poolAddress: null }
  }
  if (venue === 'venue-b') {
    const [log] = parseEventLogs({ abi: InstantPoolLauncherArtifact.abi, eventName: 'PoolLaunched', logs: receipt.logs })
    if (!log) throw new Error('no PoolLaunched event in the launch receipt')
    return { tokenAddress: log.args.token, poolAddress: log.args.pair }
  }
  const [log] = parseEventLogs({ abi: SelfFundedTokenArtifact.abi, eventName: 'SelfFundedLaunch', logs: receipt.logs })
  if (!log || !receipt.contractAddress) throw new Error('no SelfFundedLaunch event in the deployment receipt')
  return { tokenAddress: receipt.contractAddress, poolAddress: log.args.pair }
}
