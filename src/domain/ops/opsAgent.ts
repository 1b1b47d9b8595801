import { NotFoundError } from '../errors.ts'
import { agentFlags } from '../agents/agentFlags.ts'
import type { OpsPorts } from './ports.ts'

/** Points of an agent's value chart. */
const HISTORY_POINTS = 16

const notFound = (what: string): never => {
  throw new NotFoundError(what)
}

/** At most `n` distinct blocks evenly spaced from `from` to `to`, both included. */
export function sampleBlocks(from: bigint, to: bigint, n: number): bigint[] {
  if (to <= from) return [to]
  const span = to - from
  const steps = BigInt(Math.max(1, n - 1))
  return [...new Set(Array.from({ length: n }, (_, i) => from + (span * BigInt(i)) / steps))].filter((b) => b <= to)
}

export type GetOpsAgentDeps = Pick<OpsPorts, 'runtime' | 'store' | 'chain' | 'credits' | 'features'>

/**
 * One agent's card: the agent, its owner, spend, credits, portfolio, runs, chat turns,
 * automations, audit, flags and its effective owner policies (the account's, then the agent's:
 * both are evaluated, in that order); 404 for an unknown agent.
 *
 * @example
 * const card = await getOpsAgent(deps, { agentId })
 */
export async function getOpsAgent({ runtime, store, chain, credits: ledger, features }: GetOpsAgentDeps, { agentId }: { agentId: string }) {
  const { accountId } = (await runtime.inspect.owner(agentId, 'agent')) ?? notFound('Agent')
  const named = { key: 'agentId', id: agentId }
  const [agent, spent, credits, runs, chatTurns, automations, audit, portfolio, accountPolicy, agentPolicy] = await Promise.all([
    features.getAgent({ accountId, agentId }),
    store.spentTodayUsd(agentId),
    ledger.balance(accountId),
    runtime.inspect.actorsOfKindNaming('run', named),
    runtime.inspect.actorsOfKindNaming('chatturn', named),
    runtime.inspect.actorsOfKindNaming('automation', named),
    store.listAudit({ subjectId: agentId, limit: 20 }),
    chain ? features.getPortfolio({ accountId, agentId }).catch(() => null) : Promise.resolve(null),
    features.getOwnerPolicy({ scope: 'account', accountId }),
    features.getOwnerPolicy({ scope: 'agent', accountId, agentId }),
  ])
  return {
    agent, accountId, spentTodayUsd: spent, credits, portfolio, runs, chatTurns, automations, audit: audit.entries,
    flags: agentFlags({ portfolio, credits }),
    policies: { account: accountPolicy, agent: agentPolicy },
  }
}

export type GetAgentValueHistoryDeps = Pick<OpsPorts, 'runtime' | 'store' | 'chain' | 'features'>

/**
 * An agent's portfolio value over time: valued on chain at blocks from its first transaction to
 * now (no points without a chain); 404 for an unknown agent.
 *
 * @example
 * const points = await getAgentValueHistory(deps, { agentId })
 */
export async function getAgentValueHistory({ runtime, store, chain, features }: GetAgentValueHistoryDeps, { agentId }: { agentId: string }) {
  const owner = (await runtime.inspect.owner(agentId, 'agent')) ?? notFound('Agent')
  if (!chain) return []
  const head = await chain.headNow()
  const first = await store.firstAgentTxBlock(agentId)
  const from = first === null ? head : first > 0n ? first - 1n : 0n
  const blocks = await Promise.all(sampleBlocks(from, head, HISTORY_POINTS).map(async (number) => ({ number, at: await chain.blockTime(number) })))
  return features.getPortfolioHistory({ accountId: owner.accountId, agentId, blocks })
}
