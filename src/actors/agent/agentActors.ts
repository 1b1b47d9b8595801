import type { ActorRuntime } from '../runtime/index.ts'
import type { AgentMachineInput } from './agent.machine.ts'
import type { AgentActors, AgentLiveStatus } from '../../domain/agents/ports.ts'

const reasonOf = (context: unknown) => (context as { reason?: string | null } | undefined)?.reason ?? null

/**
 * The agent use cases' port onto the actor runtime: an agent's actor is created with its row,
 * owns its status, and takes the lifecycle commands.
 *
 * @example
 * const actors = createAgentActors({ runtime })
 * const { status } = await actors.send(agentId, 'agent.start')
 */
export function createAgentActors({ runtime }: { runtime: ActorRuntime }): AgentActors {
  return {
    async create({ agentId, accountId, runIntervalSeconds }, tx) {
      const input: AgentMachineInput = { agentId, accountId, runIntervalSeconds }
      const entry = await runtime.create('agent', { id: agentId, accountId, input }, tx as Parameters<ActorRuntime['create']>[2])
      return () => runtime.afterExternalCommit(entry)
    },
    async status(accountId, agentId): Promise<AgentLiveStatus | undefined> {
      const entry = await runtime.get(agentId)
      if (!entry || entry.kind.kind !== 'agent' || entry.accountId !== accountId) return undefined
      return { status: entry.status, reason: reasonOf(entry.snapshot.context) }
    },
    async scheduleChanged({ agentId, accountId }, tx) {
      return runtime.enqueueIn(tx as Parameters<ActorRuntime['enqueueIn']>[0], agentId, accountId, { type: 'agent.schedule.changed' })
    },
    async send(agentId, command) {
      const next = await runtime.send(agentId, { type: command })
      return { status: next.status, reason: reasonOf(next.snapshot.context) }
    },
  }
}
