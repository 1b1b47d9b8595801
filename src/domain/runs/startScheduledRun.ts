import { InsufficientCreditsError, ModelProviderNotConfiguredError, RunInProgressError, ServiceError } from '../errors.ts'
import { STRATEGY_PRESETS } from '../skills/builtinSkills.ts'
import { startRun, type RunsDeps } from './startRun.ts'

/** The goal of a scheduled run of an agent without a strategy preset. */
export const GENERIC_RUN_GOAL =
  "Review this agent's portfolio and the market with your tools, act within your policy if there is something worth doing, then summarise what you did and why."

/** What a schedule check did: started a run, skipped (and why), or asks for the agent to pause (and why). */
export type ScheduledRunOutcome =
  | { outcome: 'started'; runId: string; runIntervalSeconds: number }
  | { outcome: 'skipped'; reason: 'off' | 'not_due' | 'run_in_progress' | 'agent_unavailable'; runIntervalSeconds: number }
  | { outcome: 'pause'; reason: 'model_provider_not_configured' | 'insufficient_credits'; runIntervalSeconds: number }

export type StartScheduledRunInput = {
  accountId: string
  agentId: string
  /** Stable per tick (the tick's effect id): a retried check starts the same run, never a second one. */
  runId: string
  /** How early a check may be and still count as due (half the tick: a tick's jitter never skips an interval). */
  slackMs: number
}

/**
 * On a running agent's tick: starts a run with its strategy preset's goal (a generic goal
 * without one) when `run_interval_seconds` has passed since its last scheduled run; skips when
 * off, not due, or a run is in progress (never two at once); answers `pause` with the reason
 * when no provider is configured or the account lacks credits, so the agent pauses instead of
 * failing on every tick. After downtime the one overdue tick starts one run.
 *
 * @example
 * const outcome = await startScheduledRun(deps, { accountId, agentId, runId, slackMs: 500 })
 */
export async function startScheduledRun(
  deps: RunsDeps & { lastScheduledRunAt(agentId: string): Promise<Date | null>; now(): Date },
  input: StartScheduledRunInput,
): Promise<ScheduledRunOutcome> {
  const agent = await deps.agents.getOwned(input.accountId, input.agentId).catch(() => undefined)
  if (!agent || agent.status === 'deleted' || agent.listingId) return { outcome: 'skipped', reason: 'agent_unavailable', runIntervalSeconds: 0 }
  const runIntervalSeconds = agent.runIntervalSeconds
  if (runIntervalSeconds <= 0) return { outcome: 'skipped', reason: 'off', runIntervalSeconds }
  const last = await deps.lastScheduledRunAt(agent.id)
  if (last && deps.now().getTime() - last.getTime() < runIntervalSeconds * 1000 - input.slackMs) return { outcome: 'skipped', reason: 'not_due', runIntervalSeconds }
  const goal = STRATEGY_PRESETS.find((p) => p.slug === agent.strategy)?.goal ?? GENERIC_RUN_GOAL
  try {
    const run = await startRun(deps, { accountId: input.accountId, agentId: agent.id, request: { goal }, runId: input.runId, trigger: 'schedule' })
    return { outcome: 'started', runId: run.id, runIntervalSeconds }
  } catch (err) {
    if (err instanceof RunInProgressError) return { outcome: 'skipped', reason: 'run_in_progress', runIntervalSeconds }
    if (err instanceof ModelProviderNotConfiguredError) return { outcome: 'pause', reason: 'model_provider_not_configured', runIntervalSeconds }
    if (err instanceof InsufficientCreditsError) return { outcome: 'pause', reason: 'insufficient_credits', runIntervalSeconds }
    if (err instanceof ServiceError && err.status < 500) return { outcome: 'skipped', reason: 'agent_unavailable', runIntervalSeconds }
    throw err
  }
}
