import type { ActorRuntime } from '../runtime/index.ts'
import { LISTED } from './agent.machine.ts'
import type { ListingActors } from '../../domain/marketplace/ports.ts'
import type { AgentRowCache } from '../../domain/agents/agentRowCache.ts'

/**
 * The market's port onto the agent actor: a listed agent is `paused` with reason `listed` (its
 * runs stop, nothing fires on its own, a start is refused); a cancel stops it. Each drops the
 * agent's row from this node's memory (`rows`): its listing changed.
 *
 * @example
 * const actors = createListingActors(runtime, rows)
 * await actors.list(agentId)
 */
export function createListingActors(runtime: ActorRuntime, rows: Pick<AgentRowCache, 'drop'>): ListingActors {
  return {
    async list(agentId) {
      rows.drop(agentId)
      await runtime.send(agentId, { type: 'agent.pause', reason: LISTED })
    },
    async unlist(agentId) {
      rows.drop(agentId)
      const entry = await runtime.get(agentId)
      const reason = (entry?.snapshot.context as { reason?: string | null } | undefined)?.reason
      if (entry?.status === 'paused' && reason === LISTED) await runtime.send(agentId, { type: 'agent.stop' })
    },
    // The actor itself heard the sale through the runtime (market.sold, in the sale's transaction).
    forget(agentId) {
      rows.drop(agentId)
    },
  }
}
