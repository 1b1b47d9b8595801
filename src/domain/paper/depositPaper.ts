import { parseUnits } from 'viem'
import { ValidationError } from '../errors.ts'
import { formatUsd } from '../tokens/priceMath.ts'
import type { Address } from 'viem'
import type { PaperPoolView, WalletAgents, WalletChain, WalletTokens } from '../wallet/ports.ts'
import { paperPoolUsd } from '../wallet/getPortfolio.ts'
import { isPaperAddress } from './paperAddress.ts'
import { NotPaperAgentError } from './errors.ts'
import type { PaperDepositBody } from './paper.schema.ts'

/** A paper agent's virtual deposits (src/adapters/db/paper.store.ts), with the chain's latest block. */
export interface PaperDeposits {
  latestBlock(): Promise<bigint>
  /**
   * Records the deposit and credits it, once per id (`exists` when the id was recorded already),
   * unless the agent's deposits (valued when made) would pass `maxTotalUsd` (`over_limit`, nothing written).
   */
  deposit(d: { id: string; agentId: string; token: string; balanceKey: string; amount: bigint; usdValue: string | null; blockNumber: bigint; maxTotalUsd: string }): Promise<'made' | 'exists' | 'over_limit'>
  /** What the agent's deposits were worth when made, in USD ("1000.00"). */
  depositedUsd(agentId: string): Promise<string>
  /** The virtual pools of the paper tokens the agent launched, by address (lower case): a deposit of one is valued at its pool's price. */
  pools?(agentId: string): Promise<Map<string, PaperPoolView>>
  depositOf(id: string): Promise<{ agent_id: string; token: string; amount: string; usd: string | null; created_at: Date } | undefined>
}

/**
 * What a paper agent's virtual deposits may be worth in all, in USD at each deposit's price: a
 * paper agent trades a plausible account, and the paper leaderboard cannot be bought with
 * deposits (it ranks by return besides). A deposit of a token with no price adds nothing to it.
 */
export const PAPER_DEPOSIT_LIMIT_USD = '1000000'

export type DepositPaperDeps = { agents: WalletAgents; tokens: WalletTokens; chain: Pick<WalletChain, 'prices'>; deposits: PaperDeposits }
export type DepositPaperInput = PaperDepositBody & { accountId: string; agentId: string; /** The deposit's id (from the Idempotency-Key: a retry finds it). */ id: string }

/**
 * A virtual deposit into a paper agent's ledger: the token's balance grows by the amount, and its
 * ledger counts it as a transfer in valued at the latest block's price (its cost basis, as a
 * real transfer in is; unpriced when the token has no market). One of the agent's own paper
 * tokens (a paper launch's) may be deposited too, valued at its virtual pool's price. A live agent is refused
 * (`not_paper_agent`).
 *
 * @example
 * await depositPaper(deps, { accountId, agentId, id: randomUUID(), token: 'USDC', amount: '1000' })
 */
export async function depositPaper(deps: DepositPaperDeps, input: DepositPaperInput) {
  const agent = await deps.agents.getOwned(input.accountId, input.agentId)
  if (agent.mode !== 'paper') throw new NotPaperAgentError()
  // One of the agent's own paper tokens (a paper launch's): its virtual pool prices it.
  const pool = isPaperAddress(input.token) ? (await deps.deposits.pools?.(agent.id))?.get(input.token.toLowerCase()) : undefined
  const token = pool ? { address: input.token.toLowerCase() as Address, symbol: pool.symbol, decimals: 18, native: false, verified: false } : await deps.tokens.resolve(input.token)
  if (!token) throw new ValidationError({ token: 'Unknown token: a symbol such as USDC, or a token address.' })
  const [, decimals = ''] = input.amount.split('.')
  if (decimals.length > token.decimals) throw new ValidationError({ amount: `${token.symbol} has ${token.decimals} decimals.` })
  const amount = parseUnits(input.amount, token.decimals)
  const blockNumber = await deps.deposits.latestBlock()
  const prices = await deps.chain.prices(blockNumber)
  const priced = await (pool ? paperPoolUsd(deps, prices, pool, amount) : prices.usd(token, amount)).catch(() => undefined)
  const usdValue = priced ? formatUsd(priced.amountUsd18) : null
  const balanceKey = token.native ? 'eth' : token.address.toLowerCase()
  const outcome = await deps.deposits.deposit({ id: input.id, agentId: agent.id, token: token.address.toLowerCase(), balanceKey, amount, usdValue, blockNumber, maxTotalUsd: PAPER_DEPOSIT_LIMIT_USD })
  if (outcome === 'over_limit') {
    const deposited = await deps.deposits.depositedUsd(agent.id)
    throw new ValidationError({
      amount: `A paper agent's deposits are at most ${PAPER_DEPOSIT_LIMIT_USD} USD in all, valued when made; this one is worth ${usdValue} USD and ${deposited} USD is deposited already.`,
    })
  }
  const made = await deps.deposits.depositOf(input.id)
  return {
    id: input.id,
    agentId: agent.id,
    token: { symbol: token.symbol, address: token.native ? null : token.address.toLowerCase() },
    amount: input.amount,
    amountBaseUnits: made?.amount ?? amount.toString(),
    valueUsd: made ? made.usd : usdValue,
    createdAt: made ? new Date(made.created_at).toISOString() : new Date().toISOString(),
  }
}
