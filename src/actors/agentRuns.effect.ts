import { createHash } from 'node:crypto'
import type { Core } from '../core.ts'
import type { EffectHandler } from './actorKind.ts'
import { AGENT_RUN_DUE, AGENT_STOP_RUNS } from './agent.machine.ts'

/** A UUID derived from a string (the tick's effect id): a retried check names the same run. */
function uuidOf(key: string): string {
  const h = createHash('sha256').update(`agent-run:${key}`).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/**
 * The agent's run effects: on a tick, `core.startScheduledRun` (its outcome reported to the
 * agent and journaled: started, skipped with the reason, or `agent.pause` with the reason); on
 * stop, `core.stopAgentRuns` (the run in progress ends `stopped`).
 */
export function createAgentRunEffects({ core, tickMs }: { core(): Core; tickMs: number }): Record<string, EffectHandler> {
  return {
    async [AGENT_RUN_DUE](effect) {
      const outcome = await core().startScheduledRun({ accountId: effect.accountId, agentId: effect.actorId, runId: uuidOf(effect.id), slackMs: Math.floor(tickMs / 2) })
      if (outcome.outcome === 'started') return { type: 'agent.run.started', runId: outcome.runId, runIntervalSeconds: outcome.runIntervalSeconds }
      if (outcome.outcome === 'pause') return { type: 'agent.pause', reason: outcome.reason }
      return { type: 'agent.run.skipped', reason: outcome.reason, runIntervalSeconds: outcome.runIntervalSeconds }
    },
    async [AGENT_STOP_RUNS](effect) {
      await core().stopAgentRuns({ agentId: effect.actorId })
      return null
    },
  }
}
