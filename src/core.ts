import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import type { ActorRuntime } from './actors/actorRuntime.ts'
import type { WalletDeps } from './http/appDeps.ts'
import { createSwapChainPorts } from './chain/swapAdapters.ts'
import { createSwapQuoteStore } from './db/swapQuote.store.ts'
import { ChainNotConfiguredError } from './domain/errors.ts'
import type { AgentsRepository } from './domain/agents/ports.ts'
import type { SwapAgents, SwapPorts } from './domain/swaps/ports.ts'
import { quoteSwap, type QuoteSwapInput } from './domain/swaps/quoteSwap.ts'
import { executeSwap, type ExecuteSwapInput } from './domain/swaps/executeSwap.ts'
import { getSwap, type GetSwapInput } from './domain/swaps/getSwap.ts'
import { agentView } from './domain/agents/agents.service.ts'
import type { EntityManager } from '@mikro-orm/postgresql'
import { createCustomSkillsRepository } from './db/customSkills.repository.ts'
import { TOOL_NAMES } from './tools/registry.ts'
import { BUILTIN_TOOL_NAMES } from './domain/skills/builtinSkills.ts'
import type { SkillsDeps } from './domain/skills/ports.ts'
import { customSkillSchemas } from './domain/skills/skill.schema.ts'
import { createCustomSkill, type CreateCustomSkillInput } from './domain/skills/createCustomSkill.ts'
import { listCustomSkills, type ListCustomSkillsInput } from './domain/skills/listCustomSkills.ts'
import { getCustomSkill, type GetCustomSkillInput } from './domain/skills/getCustomSkill.ts'
import { updateCustomSkill, type UpdateCustomSkillInput } from './domain/skills/updateCustomSkill.ts'
import { deleteCustomSkill, type DeleteCustomSkillInput } from './domain/skills/deleteCustomSkill.ts'
import { listSkillRegistry, type ListSkillRegistryInput } from './domain/skills/listSkillRegistry.ts'
import { resolveAgentSkills, type ResolveAgentSkillsInput } from './domain/skills/resolveAgentSkills.ts'
import { checkAgentSkills } from './domain/skills/checkAgentSkills.ts'

/** What src/services.ts has built: the database, the actor runtime, the chain's wallet operations. */
export type CoreAdapters = {
  pool: pg.Pool
  runtime: ActorRuntime
  agents: AgentsRepository
  /** Absent without a chain: the use cases that need one refuse with 503 `chain_unavailable`. */
  wallet: WalletDeps | undefined
  /** MikroORM's entity manager (forked per use by the repositories). */
  em: EntityManager
}

/**
 * The composition root: builds the ports once from the adapters and returns the use cases.
 * Routes (and next, tools, MCP and effect handlers) take `core`; nothing else wires dependencies.
 *
 * @example
 * const core = createCore({ pool, runtime, wallet, agents })
 * const quote = await core.quoteSwap(readSwapRequest(accountId, body))
 */
export function createCore(adapters: CoreAdapters) {
  const { pool, runtime, wallet, agents } = adapters
  // A skill may name any tool of the registry, and the planned ones the built-in skills name.
  const skillPorts: SkillsDeps = {
    skills: createCustomSkillsRepository({ pool, em: adapters.em }),
    toolNames: new Set([...TOOL_NAMES, ...BUILTIN_TOOL_NAMES]),
    newId: randomUUID,
  }
  const swapPorts: SwapPorts | undefined = wallet && {
    agents: swapAgentsOf(agents),
    quotes: createSwapQuoteStore(pool),
    ...createSwapChainPorts({ pool, wallet, runtime }),
    clock: { now: () => Date.now() },
    newId: randomUUID,
  }
  const swaps = () => {
    if (!swapPorts) throw new ChainNotConfiguredError()
    return swapPorts
  }
  return {
    quoteSwap: (input: QuoteSwapInput) => quoteSwap(swaps(), input),
    executeSwap: (input: ExecuteSwapInput) => executeSwap(swaps(), input),
    getSwap: (input: GetSwapInput) => getSwap(swaps(), input),
    getAgent: async ({ accountId, agentId }: { accountId: string; agentId: string }) => agentView(await agents.getOwned(accountId, agentId)),
    /** The account's newest agent ids, at most `limit` (a tool's `agent_id` may be left out when there is one). */
    listAgentIds: async (accountId: string, limit: number) => (await agents.list(accountId, { limit })).map((a) => a.id),
    /** Custom skill request bodies, validated against the tool names a skill may grant. */
    customSkillSchemas: customSkillSchemas({ toolNames: skillPorts.toolNames }),
    createCustomSkill: (input: CreateCustomSkillInput) => createCustomSkill(skillPorts, input),
    listCustomSkills: (input: ListCustomSkillsInput) => listCustomSkills(skillPorts, input),
    getCustomSkill: (input: GetCustomSkillInput) => getCustomSkill(skillPorts, input),
    updateCustomSkill: (input: UpdateCustomSkillInput) => updateCustomSkill(skillPorts, input),
    deleteCustomSkill: (input: DeleteCustomSkillInput) => deleteCustomSkill(skillPorts, input),
    listSkillRegistry: (input: ListSkillRegistryInput) => listSkillRegistry(skillPorts, input),
    /** The tools and system-prompt text an agent's skills give it (for chat turns and runs). */
    resolveAgentSkills: (input: ResolveAgentSkillsInput) => resolveAgentSkills(skillPorts, input),
    /** 422 for entries of an agent's `skills` that the account may not use. */
    checkAgentSkills: (input: ResolveAgentSkillsInput) => checkAgentSkills(skillPorts, input),
  }
}

export type Core = ReturnType<typeof createCore>

/** The swap's view of the agents repository: the wallet, the effective policy and the status. */
function swapAgentsOf(agents: AgentsRepository): SwapAgents {
  return {
    async forSwap(accountId, agentId) {
      const agent = await agents.findOwned(accountId, agentId)
      return agent && { wallet: agent.walletAddress, policy: agent.policy, status: agent.status }
    },
  }
}
