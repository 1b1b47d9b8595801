import type pg from 'pg'
import { createMarketIntelStore } from '../adapters/db/marketIntel.store.ts'
import { createRefreshingMemo } from '../domain/util/refreshingMemo.ts'
import type { TokenPrices } from '../domain/tokens/ports.ts'
import type { IntelPorts } from '../domain/intel/ports.ts'
import type { AnomaliesInput, CandlesInput, IndicatorsInput, MacroInput, TopMoversInput, YieldInput } from '../domain/intel/intel.schema.ts'
import { getCandles } from '../domain/intel/getCandles.ts'
import { getIndicators } from '../domain/intel/getIndicators.ts'
import { getTopMovers } from '../domain/intel/getTopMovers.ts'
import { listAnomalies } from '../domain/intel/listAnomalies.ts'
import { getYieldOpportunities } from '../domain/intel/getYieldOpportunities.ts'
import { getMacroSignals } from '../domain/intel/getMacroSignals.ts'
import { runBacktest } from '../domain/backtest/runBacktest.ts'
import type { BacktestBody } from '../domain/backtest/backtestPlan.ts'

/**
 * Part of the composition root (src/app/core.ts spreads it into `core`): the market-intelligence
 * use cases (src/domain/intel) over the indexer's tables, candles, indicators and signals.
 */
export { tokenFacts } from '../domain/intel/tokenFacts.ts'

/** Board-wide answers are shared for `ttlMs`, then refreshed in the background for up to a minute (createRefreshingMemo). */
export function createIntelPorts({ pool, prices, ttlMs }: { pool: pg.Pool; prices: TokenPrices; ttlMs: number }): IntelPorts {
  return { prices, intel: createMarketIntelStore(pool), memo: createRefreshingMemo(ttlMs, 60_000) }
}

/**
 * @example
 * const intel = intelUseCases(createIntelPorts({ pool, prices, ttlMs: 2000 }))
 * await intel.getTopMovers({ timeframe: '24h', limit: 10, sort_by: 'gainers', min_liquidity: undefined })
 */
export function intelUseCases(ports: IntelPorts) {
  return {
    getCandles: (input: CandlesInput) => getCandles(ports, input),
    getIndicators: (input: IndicatorsInput) => getIndicators(ports, input),
    getTopMovers: (input: TopMoversInput) => getTopMovers(ports, input),
    listAnomalies: (input: AnomaliesInput) => listAnomalies(ports, input),
    getYieldOpportunities: (input: YieldInput) => getYieldOpportunities(ports, input),
    getMacroSignals: (input: MacroInput) => getMacroSignals(ports, input),
    /** POST /backtests: an automation replayed over the same candles. */
    runBacktest: (body: BacktestBody) => runBacktest(ports, body),
  }
}
