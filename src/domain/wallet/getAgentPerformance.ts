import { ValidationError } from '../errors.ts'
import { portfolioLines, type GetPortfolioDeps } from './getPortfolio.ts'
import { ledgerTokens, performanceSeries, signedCents } from './pnlRules.ts'
import { centsToUsd } from './walletRules.ts'
import type { PerformanceQuery } from './wallet.schema.ts'

export type GetAgentPerformanceInput = PerformanceQuery & { accountId: string; agentId: string }

const STEP_MS = { '1h': 3_600_000, '4h': 14_400_000, '1d': 86_400_000 } as const
/** The most points one answer holds. */
export const MAX_POINTS = 500

/**
 * An agent's performance over time, for a chart: at each step from `from` (default: 30 steps
 * before `to`) to `to` (default now), its ledger replayed up to then (pnlRules.performanceSeries):
 * the value of what the ledger held then at the last prices its operations saw, the basis it
 * held, the PnL it had realised, the USD transferred in (deposits) and out (withdrawals). `now`
 * adds what only the chain knows today: the portfolio's value (balances the ledger does not know
 * included), its unrealised PnL and the total PnL (realised + unrealised).
 *
 * @example
 * const perf = await getAgentPerformance(deps, { accountId, agentId, interval: '1d' })
 * perf.points.at(-1) // { time, valueUsd, costBasisUsd, realisedPnlUsd, unrealisedPnlUsd, depositsUsd, withdrawalsUsd, operations }
 */
export async function getAgentPerformance(deps: GetPortfolioDeps, input: GetAgentPerformanceInput) {
  const step = STEP_MS[input.interval]
  const to = (input.to ?? new Date()).getTime()
  const from = input.from?.getTime() ?? to - 30 * step
  if (from > to) throw new ValidationError({ from: 'Must not be after to.' })
  if ((to - from) / step + 1 > MAX_POINTS) throw new ValidationError({ from: `At most ${MAX_POINTS} points of ${input.interval} per request.` })
  const [{ agent, totals, totalValueUsd }, ops] = await Promise.all([portfolioLines(deps, input), deps.portfolio.ledgerOps(input.agentId)])
  const times: number[] = []
  for (let t = from; t < to; t += step) times.push(t)
  times.push(to)
  const prices = await deps.portfolio.indexedPrices({ tokens: ledgerTokens(ops), from: new Date(from), to: new Date(to), stepSeconds: step / 1000 })
  const points = performanceSeries(ops, times, prices).map((p) => ({
    time: new Date(p.at).toISOString(),
    valueUsd: centsToUsd(p.valueCents),
    costBasisUsd: centsToUsd(p.basisCents),
    realisedPnlUsd: centsToUsd(p.realisedCents),
    unrealisedPnlUsd: centsToUsd(p.valueCents - p.basisCents),
    depositsUsd: centsToUsd(p.depositsCents),
    withdrawalsUsd: centsToUsd(p.withdrawalsCents),
    operations: p.operations,
  }))
  return {
    agentId: agent.id,
    interval: input.interval,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    points,
    now: {
      totalValueUsd,
      ...totals,
      pnlUsd: centsToUsd(signedCents(totals.realisedPnlUsd) + signedCents(totals.unrealisedPnlUsd)),
    },
  }
}
