import type pg from 'pg'
import { formatUnits, getContractAddress } from 'viem'
import type { WalletDeps } from './walletDeps.ts'
import type { AgentsRepository } from '../../domain/agents/ports.ts'
import type { LaunchInput } from '../../domain/launches/launch.schema.ts'
import type { LaunchPorts, LaunchPrediction } from '../../domain/launches/ports.ts'
import { formatUsd } from '../../domain/tokens/priceMath.ts'
import { BondingCurveLaunchpadArtifact } from '../../dev/artifacts/index.ts'
import type { ChainHandle } from './chain.ts'
import { simulateLaunch } from './launchSimulation.ts'
import { LAUNCH_SUPPLY, VENUE_B_STARTING_MARKET_CAP, parseAmount, quoteAsset, seedOf } from './launchTx.ts'
import { createPriceReader } from './priceReader.ts'
import { isVerifiedSymbol, resolveToken, tokenUsd } from './tokenInfo.ts'
import { createPaperLaunches, type PaperLaunches } from './paperLaunch.ts'
import { createPaperStore } from '../db/paper.store.ts'

/**
 * The outside of the launch use cases: the agents repository, the venues' quote assets and the
 * verified symbols, prices, the launch simulation and prediction on chain. (The 24-hour spend
 * record and the launch actors: src/actors/launch/launches.ts.)
 *
 * @example
 * const ports = createLaunchPorts({ pool, wallet, agents })
 */
export function createLaunchPorts({ pool, wallet, agents }: { pool: pg.Pool; wallet: WalletDeps; agents: AgentsRepository }): Omit<LaunchPorts, 'newId' | 'actors' | 'spend'> {
  const { chain, loadAccount } = wallet
  const paper = createPaperLaunches({ chain, store: createPaperStore(pool) })
  const quotes = { 'venue-a': chain.manifest.quotes['venue-a'] ?? [], 'venue-b': chain.manifest.quotes['venue-b'] ?? [], 'self-funded': ['ETH', 'USDC'] }
  return {
    agents: {
      async forLaunch(accountId, agentId) {
        const agent = await agents.findOwned(accountId, agentId)
        return agent && { status: agent.status, policy: agent.policy, listingId: agent.listingId, mode: agent.mode }
      },
    },
    venues: {
      quotes: (venue) => quotes[venue],
      isVerifiedSymbol: (symbol) => isVerifiedSymbol({ pool, chain }, symbol),
    },
    prices: {
      quoteToken: (symbol) => resolveToken({ pool, chain }, symbol),
      async seedUsd(input) {
        const quote = await resolveToken({ pool, chain }, input.quote)
        const value = quote && (await tokenUsd(chain, await createPriceReader(chain), quote, seedOf(chain.manifest, input)))
        return value ? formatUsd(value.amountUsd18) : undefined
      },
      async unitUsd18(quote) {
        const prices = await createPriceReader(chain)
        const [eth, q] = await Promise.all([prices.quote('ETH'), prices.quote(quote)])
        return eth && q ? { eth: eth.usd18, quote: q.usd18 } : undefined
      },
    },
    simulator: {
      // A paper agent's launch is checked against its paper ledger, nothing simulated on chain (docs/api.md, "Paper agents").
      simulate: async (input) => ((await paper.isPaper(input.agentId)) ? paper.check(input).then(() => ({ gas: 0n, maxFeePerGas: 0n })) : simulateLaunch({ chain }, input, await loadAccount(input.agentId))),
      predict: (input) => predictLaunch(chain, input, loadAccount, paper),
    },
  }
}

/** The token address a launch would make, its starting market cap and the venue's fees, read from the chain. */
async function predictLaunch(chain: ChainHandle, input: LaunchInput, loadAccount: WalletDeps['loadAccount'], paper: PaperLaunches): Promise<LaunchPrediction> {
  const client = chain.publicClient
  const q = quoteAsset(chain.manifest, input.quote)
  const common = { totalSupply: LAUNCH_SUPPLY, quoteDecimals: q.decimals }
  // A paper launch makes its virtual token at the address its launch id derives (src/domain/paper/paperAddress.ts).
  const predicted = (await paper.isPaper(input.agentId)) ? paper.tokenAddress(input.launchId) : undefined
  if (input.venue === 'venue-a') {
    const venueA = chain.manifest.contracts.venueA
    const [nonce, cfg] = await Promise.all([
      client.getTransactionCount({ address: venueA }),
      client.readContract({ address: venueA, abi: BondingCurveLaunchpadArtifact.abi, functionName: 'quoteConfig', args: [q.address] }) as Promise<readonly [boolean, bigint, bigint]>,
    ])
    return {
      ...common,
      predictedTokenAddress: predicted ?? getContractAddress({ from: venueA, nonce: BigInt(nonce) }),
      marketCap: cfg[1],
      fees: { tradeFeeBps: 100, creatorShareBps: 5000, platformShareBps: 5000, graduationThreshold: formatUnits(cfg[2], q.decimals) },
    }
  }
  if (input.venue === 'venue-b') {
    const venueB = chain.manifest.contracts.venueB
    const nonce = await client.getTransactionCount({ address: venueB })
    return {
      ...common,
      predictedTokenAddress: predicted ?? getContractAddress({ from: venueB, nonce: BigInt(nonce) }),
      marketCap: parseAmount(VENUE_B_STARTING_MARKET_CAP[input.quote] ?? '1', q.decimals),
      fees: { poolFeeBps: 100, lpFeeBps: 30, creatorShareBps: 5000, platformShareBps: 5000 },
    }
  }
  const account = await loadAccount(input.agentId)
  const nonce = await client.getTransactionCount({ address: account.address, blockTag: 'pending' })
  const seed = seedOf(chain.manifest, input)
  return {
    ...common,
    // An ERC-20 seed is approved first: the deployment takes the next nonce.
    predictedTokenAddress: predicted ?? getContractAddress({ from: account.address, nonce: BigInt(q.native ? nonce : nonce + 1) }),
    marketCap: seed,
    fees: { lpFeeBps: 30, seed: formatUnits(seed, q.decimals) },
  }
}
