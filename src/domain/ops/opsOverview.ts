import type { OpsPorts } from './ports.ts'

/** How long the overview waits for the chain head before answering without it. */
const CHAIN_HEAD_TIMEOUT_MS = 500
/** Work the overview counts by its effects: an automation's firing is no actor of its own. */
export const EFFECT_WORK = { firing: 'automation.fire' }

export type GetOpsOverviewDeps = Pick<OpsPorts, 'runtime' | 'store' | 'chain'>

/**
 * The operator overview: the runtime's counts (actors by kind and state, work started, effects,
 * dead letters, stuck actors), the service's figures (transactions, model credits, the indexed
 * block), and how far the indexer is behind the chain's head (null without a chain or when it
 * does not answer in time).
 *
 * @example
 * const overview = await getOpsOverview(deps)
 */
export async function getOpsOverview({ runtime, store, chain }: GetOpsOverviewDeps) {
  const [counts, figures, head] = await Promise.all([runtime.inspect.counts(EFFECT_WORK), store.serviceFigures(), chain ? chain.head(CHAIN_HEAD_TIMEOUT_MS) : null])
  const lag = head !== null && figures.indexedBlock !== null ? Math.max(0, head - figures.indexedBlock) : null
  return {
    actors: counts.actors,
    work: counts.work,
    transactions: figures.transactions,
    effects: counts.effects,
    deadLetters: counts.deadLetters,
    stuck: counts.stuck,
    modelCreditsLastHour: figures.modelCreditsLastHour,
    creditsReserved: figures.creditsReserved,
    indexedBlock: figures.indexedBlock,
    chain: { head, indexedBlock: figures.indexedBlock, lagBlocks: lag },
    at: new Date().toISOString(),
  }
}
