import { createAgent, type CreateAgentDeps } from './createAgent.ts'
import { agentView, type AgentView } from './agentView.ts'
import type { AgentCreateBody } from './agent.schema.ts'

export type CloneAgentInput = {
  accountId: string
  agentId: string
  /** The clone's name; `"<name> (copy)"` when absent. */
  name?: string | undefined
  /** The clone's id when the caller fixes it (from the request's Idempotency-Key): a retry finds the clone made. */
  id?: string | undefined
}

/** The longest agent name (agent.schema.ts). */
const NAME_MAX = 64

/**
 * Makes a new live agent from an agent's settings (a paper agent is never switched to live: it
 * is cloned): name, model, skills, system prompt, persona, strategy, temperature, run interval,
 * public description, its effective policy and payout wallet. The clone has a new custodial
 * wallet and starts stopped and private; nothing else is copied: not the funds or the virtual
 * ledger, not the runs, chats, automations or whitelist (each of those moves money or acts on the
 * source's own history, so they are set up again on purpose).
 *
 * @example
 * const live = await cloneAgent(deps, { accountId, agentId: paperId })
 * live.mode // 'live'
 */
export async function cloneAgent(deps: CreateAgentDeps, input: CloneAgentInput): Promise<AgentView> {
  const made = input.id ? await deps.agents.findOwned(input.accountId, input.id) : undefined
  if (made) return agentView(made)
  const src = await deps.agents.getOwned(input.accountId, input.agentId)
  const suffix = ' (copy)'
  return createAgent(deps, {
    accountId: input.accountId,
    id: input.id,
    name: input.name ?? `${src.name.slice(0, NAME_MAX - suffix.length)}${suffix}`,
    model: src.model,
    skills: src.skills,
    system_prompt: src.systemPrompt,
    payout_wallet: src.payoutWallet,
    persona: src.persona,
    strategy: src.strategy,
    temperature: src.temperature,
    is_public: false,
    public_description: src.publicDescription,
    policy: src.policy as AgentCreateBody['policy'],
    run_interval_seconds: src.runIntervalSeconds,
    mode: 'live',
  })
}
