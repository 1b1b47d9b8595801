import type { OpsPorts } from './ports.ts'

/** How long the overview waits for the chain head before answering without it. */
const CHAIN_HEAD_TIMEOUT_MS = 500
/** Work the overview counts by its effects: an automation's firing is no actor of its own. */
export const EFFECT_WORK = { firing: 'automation.fire' }

export type GetOpsOverviewDeps = Pick<OpsPorts, 'runtime' | 'store' | 'chain'>

/**
 * The operator overview: the runtime's counts (actors by kind and state, work started, effects,
 * dead letters, stuck actors), the service's figures (transactions, model credits, the indexed
 * block), how far the indexer is behind the chain's head (null without a chain or when it
 * does not answer in time), and the storage: the database's size, its growth over the last hour
 * and the retention's backlog.
 *
 * @example
 * const overview = await getOpsOverview(deps)
 */
export async function getOpsOverview({ runtime, store, chain }: GetOpsOverviewDeps) {
  const [counts, figures, head, backlog] = await Promise.all([
    runtime.inspect.counts(EFFECT_WORK), store.serviceFigures(), chain ? chain.head(CHAIN_HEAD_TIMEOUT_MS) : null, runtime.retention.backlog(),
  ])
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
    storage: { databaseBytes: figures.databaseBytes, growthLastHourBytes: figures.growthLastHourBytes, compactionBacklog: backlog },
    at: new Date().toISOString(),
  }
}
