import { createHash } from 'node:crypto'
import type { Bound } from '../../domain/util/bound.ts'
import type { NextCheck, startScheduledRun } from '../../domain/runs/startScheduledRun.ts'
import type { EffectHandler } from '../runtime/index.ts'
import { AGENT_RUN_DUE, AGENT_STOP_RUNS } from './agent.machine.ts'

/** The core's run use cases an agent's schedule calls. */
export type AgentRunCalls = {
  startScheduledRun: Bound<typeof startScheduledRun>
  stopAgentRuns(input: { agentId: string; stoppedBy?: string | undefined }): Promise<string | null>
}

/** A UUID derived from a string (the check's effect id): a retried check names the same run. */
function uuidOf(key: string): string {
  const h = createHash('sha256').update(`agent-run:${key}`).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/**
 * How early a check may come and still find a run due: the timer is due on the database's clock,
 * the check compares on the service's, and the two may differ by a little.
 */
export const SCHEDULE_SLACK_MS = 250

/** The next check as the agent's timer takes it: a delay from the outcome's commit, and the due time. */
const nextOf = (next: NextCheck) => ({ nextRunInMs: next ? Math.max(0, Math.ceil(next.inMs)) : null, dueAt: next ? next.dueAt.toISOString() : null })

/**
 * The agent's run effects: a schedule check, `core.startScheduledRun` (its outcome reported to
 * the agent and journaled: started or skipped with the reason and the next run, which re-arms the
 * agent's timer, or `agent.pause` with the reason); on stop, `core.stopAgentRuns` (the run in
 * progress ends `stopped` if it was created before the stop was committed).
 */
export function createAgentRunEffects({ core }: { core(): AgentRunCalls }): Record<string, EffectHandler> {
  return {
    async [AGENT_RUN_DUE](effect) {
      const outcome = await core().startScheduledRun({ accountId: effect.accountId, agentId: effect.actorId, runId: uuidOf(effect.id), slackMs: SCHEDULE_SLACK_MS })
      if (outcome.outcome === 'pause') return { type: 'agent.pause', reason: outcome.reason }
      // Which check this answers: only the latest one's outcome re-arms the agent's timer.
      const { check } = (effect.params ?? {}) as { check?: number }
      const next = { ...nextOf(outcome.next), ...(check !== undefined ? { check } : {}) }
      if (outcome.outcome === 'started') return { type: 'agent.run.started', runId: outcome.runId, runIntervalSeconds: outcome.runIntervalSeconds, ...next }
      return { type: 'agent.run.skipped', reason: outcome.reason, runIntervalSeconds: outcome.runIntervalSeconds, ...next }
    },
    async [AGENT_STOP_RUNS](effect) {
      // Only a run created before this effect's row was (the commit of the stop, pause or delete):
      // a run started through the API once the stop was committed, before this ran, stays.
      await core().stopAgentRuns({ agentId: effect.actorId, stoppedBy: effect.id })
      return null
    },
  }
}
