import { erc20Abi, getContractAddress, type Address } from 'viem'
import { AmmFactoryArtifact, SelfFundedTokenArtifact } from '../../../dev/artifacts/index.ts'
import { poolParams } from './ammPool.ts'
import { lower, quoteSymbolOf, type IndexerContext } from './indexerContext.ts'
import type { EventLog, FoundToken } from './indexedRows.ts'

/*
 * Self-funded launches: the token contract itself emits SelfFundedLaunch, so the event is read
 * from any address and trusted only when the token is genuine (our factory's pair, the
 * reference creation code).
 */

/** The token a SelfFundedLaunch announces, or undefined when it is not genuine. */
export async function selfFundedLaunch(ctx: IndexerContext, l: EventLog): Promise<FoundToken | undefined> {
  const { client, contracts, log } = ctx
  const a = l.args as { creator: Address; pair: Address; quote: Address; quoteAmount: bigint; supply: bigint }
  const token = lower(l.address)
  const blockNumber = l.blockNumber
  // Only a pool our factory made for (token, quote): anything else could emit fake swaps.
  const factoryPair = await client
    .readContract({ address: contracts.factory, abi: AmmFactoryArtifact.abi, functionName: 'getPair', args: [l.address, a.quote], blockNumber })
    .catch(() => undefined)
  if (!factoryPair || lower(factoryPair) !== lower(a.pair)) {
    log.debug({ token, tx: l.transactionHash }, 'SelfFundedLaunch without a factory pair: ignored')
    return undefined
  }
  const t = { address: l.address, abi: erc20Abi, blockNumber } as const
  const [name, symbol, sent, p] = await Promise.all([
    client.readContract({ ...t, functionName: 'name' }).catch(() => '?'),
    client.readContract({ ...t, functionName: 'symbol' }).catch(() => '?'),
    client.getTransaction({ hash: l.transactionHash }),
    poolParams(ctx, a.pair, token, blockNumber),
  ])
  // Only tokens deployed by an account with exactly the reference SelfFundedToken creation code.
  const genuine =
    sent.to === null &&
    sent.input.startsWith(SelfFundedTokenArtifact.bytecode) &&
    lower(getContractAddress({ from: sent.from, nonce: BigInt(sent.nonce) })) === token
  if (!genuine) {
    log.debug({ token, tx: l.transactionHash }, 'SelfFundedLaunch from other code: ignored')
    return undefined
  }
  return {
    row: {
      address: token, venue: 'self-funded', symbol, name, quoteAddress: lower(a.quote),
      quoteSymbol: await quoteSymbolOf(ctx, lower(a.quote), blockNumber), creator: lower(a.creator), totalSupply: a.supply,
      // Verified is the operator's word (plus quote assets and stocks), never the indexer's.
      poolAddress: lower(a.pair), verified: false, blockNumber: Number(blockNumber), txHash: l.transactionHash,
      curveVirtualQuote: null, graduationThreshold: null,
      poolTokenIsToken0: p.tokenIsToken0, poolVirtualToken: p.virtualToken, poolVirtualQuote: p.virtualQuote,
    },
    info: { address: token, venue: 'self-funded', quoteAddress: lower(a.quote), pool: lower(a.pair), ...p },
  }
}
