import { InsufficientCreditsError, ModelProviderNotConfiguredError, RunInProgressError, ServiceError } from '../errors.ts'
import { STRATEGY_PRESETS } from '../skills/builtinSkills.ts'
import { startRun, type RunsDeps } from './startRun.ts'

/** The goal of a scheduled run of an agent without a strategy preset. */
export const GENERIC_RUN_GOAL =
  "Review this agent's portfolio and the market with your tools, act within your policy if there is something worth doing, then summarise what you did and why."

/**
 * When the agent should be checked next: `inMs` from now (its one durable timer), and `dueAt`, when
 * its next run is due (a run of the agent ending at or after it calls for a check at once). Null:
 * not until something changes (the interval is 0, the agent is gone).
 */
export type NextCheck = { inMs: number; dueAt: Date } | null

/** What a schedule check did: started a run, skipped (and why), or asks for the agent to pause (and why). */
export type ScheduledRunOutcome =
  | { outcome: 'started'; runId: string; runIntervalSeconds: number; next: NextCheck }
  | { outcome: 'skipped'; reason: 'off' | 'not_due' | 'run_in_progress' | 'agent_unavailable'; runIntervalSeconds: number; next: NextCheck }
  | { outcome: 'pause'; reason: 'model_provider_not_configured' | 'insufficient_credits'; runIntervalSeconds: number; next: NextCheck }

export type StartScheduledRunInput = {
  accountId: string
  agentId: string
  /** Stable per check (the check's effect id): a retried check starts the same run, never a second one. */
  runId: string
  /** How early a check may be and still count as due (the service's and the database's clocks may differ a little). */
  slackMs: number
}

/**
 * A running agent's schedule check (on its start, when its timer fires, when its interval
 * changes): starts a run with its strategy preset's goal (a generic goal without one) when
 * `run_interval_seconds` has passed since its last scheduled run; skips when off, not due, or a
 * run is in progress (never two at once); answers `pause` with the reason when no provider is
 * configured or the account lacks credits, so the agent pauses instead of failing on every
 * check. Every answer says when to check next (`next`): at the next due time, one interval
 * later when a run was in progress (or as soon as it ends), never while the interval is 0.
 * After downtime the one overdue timer starts one run.
 *
 * @example
 * const outcome = await startScheduledRun(deps, { accountId, agentId, runId, slackMs: 500 })
 */
export async function startScheduledRun(
  deps: RunsDeps & { now(): Date },
  input: StartScheduledRunInput,
): Promise<ScheduledRunOutcome> {
  // The agent, its last scheduled run's time and the account's balance: one read.
  const facts = await deps.runs.scheduleFacts(input.accountId, input.agentId)
  const agent = facts?.agent
  if (!facts || !agent || agent.status === 'deleted' || agent.listingId) return { outcome: 'skipped', reason: 'agent_unavailable', runIntervalSeconds: 0, next: null }
  const runIntervalSeconds = agent.runIntervalSeconds
  if (runIntervalSeconds <= 0) return { outcome: 'skipped', reason: 'off', runIntervalSeconds, next: null }
  const intervalMs = runIntervalSeconds * 1000
  const { lastRunAt: last, balance } = facts
  const now = deps.now().getTime()
  const after = (inMs: number, dueAt = now + inMs): NextCheck => ({ inMs, dueAt: new Date(dueAt) })
  if (last && now - last.getTime() < intervalMs - input.slackMs) {
    const dueAt = last.getTime() + intervalMs
    return { outcome: 'skipped', reason: 'not_due', runIntervalSeconds, next: after(dueAt - now, dueAt) }
  }
  const goal = STRATEGY_PRESETS.find((p) => p.slug === agent.strategy)?.goal ?? GENERIC_RUN_GOAL
  // Due now, but a run is in progress: it is asked to tell the agent when it ends (a run does not
  // otherwise), and the check comes again then, or an interval from now. A run that ended in
  // between (nothing left to ask) leaves the way free. (A run started by a check's effect is
  // created with the check's outcome, after this answers: the database's refusal of a second run
  // then fails that commit, and the check is tried again.)
  if (facts.activeRun && (await deps.runs.tellAgentAtEnd(agent.id))) {
    return { outcome: 'skipped', reason: 'run_in_progress', runIntervalSeconds, next: after(intervalMs, now) }
  }
  for (let attempt = 0; ; attempt++) {
    try {
      const run = await startRun(deps, { accountId: input.accountId, agentId: agent.id, request: { goal }, runId: input.runId, trigger: 'schedule', balance, agent })
      // Due an interval after the run's own start (what the next check measures from), not after
      // this check began: under load the run's insert can come seconds later, and a timer set from
      // the check's time fired early, into a check that found nothing due.
      const dueAt = Date.parse(run.createdAt) + intervalMs
      return { outcome: 'started', runId: run.id, runIntervalSeconds, next: after(Math.max(0, dueAt - deps.now().getTime()), dueAt) }
    } catch (err) {
      // Due now, but a run is in progress: it is asked to tell the agent when it ends (a run does
      // not otherwise), and the check comes again then, or an interval from now. A run that ended
      // in between (nothing left to ask) leaves the way free: check once more.
      if (err instanceof RunInProgressError) {
        if (attempt === 0 && !(await deps.runs.tellAgentAtEnd(agent.id))) continue
        return { outcome: 'skipped', reason: 'run_in_progress', runIntervalSeconds, next: after(intervalMs, now) }
      }
      if (err instanceof ModelProviderNotConfiguredError) return { outcome: 'pause', reason: 'model_provider_not_configured', runIntervalSeconds, next: null }
      if (err instanceof InsufficientCreditsError) return { outcome: 'pause', reason: 'insufficient_credits', runIntervalSeconds, next: null }
      if (err instanceof ServiceError && err.status < 500) return { outcome: 'skipped', reason: 'agent_unavailable', runIntervalSeconds, next: null }
      throw err
    }
  }
}
