import type { ActorRuntime } from './actorRuntime.ts'
import { LISTED } from './agent.machine.ts'
import type { ListingActors } from '../domain/marketplace/ports.ts'

/**
 * The market's port onto the agent actor: a listed agent is `paused` with reason `listed` (its
 * runs stop, nothing fires on its own, a start is refused); a cancel stops it.
 *
 * @example
 * const actors = createListingActors(runtime)
 * await actors.list(agentId)
 */
export function createListingActors(runtime: ActorRuntime): ListingActors {
  return {
    async list(agentId) {
      await runtime.send(agentId, { type: 'agent.pause', reason: LISTED })
    },
    async unlist(agentId) {
      const entry = await runtime.get(agentId)
      const reason = (entry?.snapshot.context as { reason?: string | null } | undefined)?.reason
      if (entry?.status === 'paused' && reason === LISTED) await runtime.send(agentId, { type: 'agent.stop' })
    },
    forget: (agentId) => runtime.forget(agentId),
  }
}
