import type { AgentCreateBody, AgentMode } from './agent.schema.ts'
import { agentView, type AgentView } from './agentView.ts'
import { DEFAULT_POLICY, policySchema } from './policy.ts'
import type { AgentActors, AgentWallet, AgentsRepository, WithTransaction } from './ports.ts'
import { resolvePolicyTokens, type ResolveVerifiedSymbol } from './resolvePolicyTokens.ts'

export type CreateAgentDeps = {
  agents: AgentsRepository
  actors: AgentActors
  withTransaction: WithTransaction
  /** Makes a custodial wallet for a new agent; the key is encrypted bound to the agent id. */
  createWallet(agentId: string): AgentWallet
  /** Resolves a token-list symbol to a verified token (absent without a chain: lists then take addresses only). */
  resolveVerifiedSymbol?: ResolveVerifiedSymbol | undefined
  newId(): string
}
/**
 * A new agent's body; `run_interval_seconds` (0) and `mode` (`live`) may be left out by callers
 * other than the route. `id`: the new agent's id when the caller fixes it (a clone's, from its
 * Idempotency-Key), else a new one.
 */
export type CreateAgentInput = Omit<AgentCreateBody, 'run_interval_seconds' | 'mode'> & {
  run_interval_seconds?: number
  mode?: AgentMode | undefined
  accountId: string
  id?: string | undefined
}

/**
 * Creates an agent: its row with a new custodial wallet and its policy (token symbols resolved to
 * verified tokens), and its actor (stopped), in one transaction.
 *
 * @example
 * const agent = await createAgent(deps, { accountId, name: 'a', model: 'gpt-4o-mini', skills: ['trading'] })
 */
export async function createAgent(deps: CreateAgentDeps, { accountId, id: givenId, ...body }: CreateAgentInput): Promise<AgentView> {
  const id = givenId ?? deps.newId()
  const wallet = deps.createWallet(id)
  const policy = policySchema.parse({ ...DEFAULT_POLICY, ...(await resolvePolicyTokens(body.policy, deps.resolveVerifiedSymbol)) })
  const runIntervalSeconds = body.run_interval_seconds ?? 0
  const afterCommit = await deps.withTransaction(async (tx) => {
    await deps.agents.insert(
      {
        id, accountId, name: body.name, model: body.model, skills: body.skills, systemPrompt: body.system_prompt ?? null,
        payoutWallet: body.payout_wallet ?? null, persona: body.persona ?? null, strategy: body.strategy ?? null,
        temperature: body.temperature ?? null, isPublic: body.is_public ?? false, publicDescription: body.public_description ?? null,
        policy, walletAddress: wallet.address, walletKeyEncrypted: wallet.encryptedKey, runIntervalSeconds,
        mode: body.mode ?? 'live',
      },
      tx,
    )
    return deps.actors.create({ agentId: id, accountId, runIntervalSeconds }, tx)
  })
  afterCommit()
  return agentView(await deps.agents.getOwned(accountId, id))
}
