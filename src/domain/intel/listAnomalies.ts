import type { IntelPorts } from './ports.ts'
import type { AnomaliesInput } from './intel.schema.ts'

export type ListAnomaliesDeps = Pick<IntelPorts, 'prices' | 'intel'>

const WINDOW_SECONDS = { '1h': 3600, '4h': 14_400, '24h': 86_400, '7d': 604_800 } as const

/**
 * Anomalies the indexer detected in the blocks of the window (src/domain/intel/anomalyRules.ts
 * has the rules), newest first; `detectedAt` is the time of the block that showed it.
 *
 * @example
 * const { anomalies } = await listAnomalies(deps, { timeframe: '24h', types: ['whale_movement'], limit: 20 })
 */
export async function listAnomalies(deps: ListAnomaliesDeps, input: AnomaliesInput) {
  const since = new Date(Date.now() - WINDOW_SECONDS[input.timeframe] * 1000)
  const rows = await deps.intel.anomalies({ chainId: deps.prices.deployment?.chainId, since, types: input.types, limit: input.limit })
  return {
    timeframe: input.timeframe,
    anomalies: rows.map((r) => ({
      type: r.type, mints: r.mints, description: r.description, severity: r.severity, detectedAt: r.detectedAt.toISOString(), details: { ...r.details, blockNumber: r.blockNumber },
    })),
  }
}
