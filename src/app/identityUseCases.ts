import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { createAccountsRepository } from '../adapters/db/accounts.repository.ts'
import { createSessionsRepository } from '../adapters/db/sessions.repository.ts'
import { withTransaction } from '../adapters/db/transaction.ts'
import { createAgentActors } from '../actors/agent/agentActors.ts'
import { newAgentWallet, tokenContractAt, verifiedSymbolResolver } from '../adapters/chain/agentAdapters.ts'
import { createKeyCache } from '../domain/accounts/keyCache.ts'
import { createAccount } from '../domain/accounts/createAccount.ts'
import { findOrCreateAccount } from '../domain/accounts/findOrCreateAccount.ts'
import { getAccount } from '../domain/accounts/getAccount.ts'
import { updateAccount } from '../domain/accounts/updateAccount.ts'
import { createApiKey, type CreateApiKeyInput } from '../domain/accounts/createApiKey.ts'
import { listApiKeys } from '../domain/accounts/listApiKeys.ts'
import { revokeApiKey } from '../domain/accounts/revokeApiKey.ts'
import { authenticateKey } from '../domain/accounts/authenticateKey.ts'
import { issueNonce } from '../domain/accounts/issueNonce.ts'
import { signIn, type SignInInput } from '../domain/accounts/signIn.ts'
import { describeSession, resolveSession } from '../domain/accounts/resolveSession.ts'
import { signOut } from '../domain/accounts/signOut.ts'
import type { KeyPage } from '../domain/accounts/ports.ts'
import type { ProfileBody } from '../domain/accounts/account.schema.ts'
import type { AgentRowCache } from '../domain/agents/agentRowCache.ts'
import { createAgent, type CreateAgentInput } from '../domain/agents/createAgent.ts'
import { cloneAgent, type CloneAgentInput } from '../domain/agents/cloneAgent.ts'
import { getAgent, type AgentRef } from '../domain/agents/getAgent.ts'
import { listAgents, type ListAgentsInput } from '../domain/agents/listAgents.ts'
import { updateAgent, type UpdateAgentInput } from '../domain/agents/updateAgent.ts'
import { startAgent } from '../domain/agents/startAgent.ts'
import { stopAgent } from '../domain/agents/stopAgent.ts'
import { deleteAgent } from '../domain/agents/deleteAgent.ts'
import { listWhitelist } from '../domain/agents/listWhitelist.ts'
import { addToWhitelist, type AddToWhitelistInput } from '../domain/agents/addToWhitelist.ts'
import { removeFromWhitelist, type RemoveFromWhitelistInput } from '../domain/agents/removeFromWhitelist.ts'
import { listAgentAudit, type ListAgentAuditInput } from '../domain/agents/listAgentAudit.ts'
import { listAudit } from '../adapters/db/auditTrail.store.ts'
import { applyGuardrailChange } from '../adapters/db/guardrails.store.ts'
import { SKILL_SLUGS, STRATEGY_SLUGS } from '../domain/skills/builtinSkills.ts'
import { agentSchemas } from '../domain/agents/agent.schema.ts'
import type { CoreAdapters } from './coreAdapters.ts'

/**
 * Part of the composition root (src/app/core.ts spreads it into `core`): accounts, API keys and
 * dashboard sessions (src/domain/accounts).
 *
 * @example
 * const { createAccount } = accountUseCases(adapters)
 * const { account, apiKey } = await createAccount({ name: 'ops', isOperator: true })
 */
export function accountUseCases({ identity: { em, config, chainId, publishKeyRevoked }, pool, credits }: CoreAdapters) {
  const accounts = createAccountsRepository({ em, pool, credits })
  const sessions = createSessionsRepository(em)
  const keyCache = createKeyCache({ ttlMs: config.apiKeyCacheMs })
  const created = { accounts, starterCredits: config.starterCredits }
  const signing = { ...created, sessions, chainId, sessionTtlSeconds: config.sessionTtlSeconds, nonceTtlSeconds: config.siweNonceTtlSeconds }
  return {
    createAccount: (input: { name: string; isOperator?: boolean }) => createAccount(created, input),
    findOrCreateAccount: (input: { address: string }) => findOrCreateAccount(created, input),
    getAccount: (input: { accountId: string }) => getAccount({ accounts }, input),
    updateAccount: (input: ProfileBody & { accountId: string }) => updateAccount({ accounts }, input),
    createApiKey: (input: CreateApiKeyInput) => createApiKey({ accounts }, input),
    listApiKeys: (input: { accountId: string } & KeyPage) => listApiKeys({ accounts }, input),
    revokeApiKey: (input: { accountId: string; keyId: string }) => revokeApiKey({ accounts, keyCache, publishRevoked: publishKeyRevoked }, input),
    authenticateKey: (input: { value: string }) => authenticateKey({ accounts, keyCache }, input),
    /** Drops a key from this node's cache: a revocation seen on another node. */
    forgetApiKey: (hash: string) => keyCache.revoke(hash),
    issueNonce: () => issueNonce(signing),
    signIn: (input: SignInInput) => signIn(signing, input),
    resolveSession: (input: { token: string }) => resolveSession({ accounts, sessions }, input),
    /** The session of a cookie as `GET /auth/session` answers it (with its CSRF token); undefined when it is not live. */
    describeSession: (input: { token: string }) => describeSession({ accounts, sessions }, input),
    signOut: (input: { token: string }) => signOut({ sessions }, input),
  }
}

/**
 * Part of the composition root (src/app/core.ts spreads it into `core`): agents' configuration,
 * lifecycle (the agent actor), whitelist and audit trail (src/domain/agents).
 *
 * @example
 * const { getAgent } = agentUseCases(adapters)
 * const agent = await getAgent({ accountId, agentId })
 */
export function agentUseCases({ pool, runtime, wallet, agents, identity, models, chat }: CoreAdapters, rows: AgentRowCache) {
  const { config, masterKey } = identity
  const actors = createAgentActors({ runtime })
  const resolveVerifiedSymbol = wallet && verifiedSymbolResolver(pool, wallet.chain)
  const tx = { withTransaction: <T>(fn: (db: pg.PoolClient) => Promise<T>) => withTransaction(pool, fn) }
  const reads = { agents, actors, rows }
  const hold = { whitelistHoldSeconds: config.whitelistHoldSeconds }
  const creating = { ...reads, ...tx, resolveVerifiedSymbol, createWallet: (id: string) => newAgentWallet(masterKey, id), newId: randomUUID }
  return {
    /** Agent request bodies, built from the catalogs as the route builds them (the agent tools parse with them). */
    agentSchemas: agentSchemas({
      models: new Set(models.keys()), defaultModel: chat.defaultModel.id, skills: SKILL_SLUGS, strategies: STRATEGY_SLUGS,
      minRunIntervalSeconds: config.runMinIntervalSeconds,
    }),
    createAgent: (input: CreateAgentInput) => createAgent(creating, input),
    cloneAgent: (input: CloneAgentInput) => cloneAgent(creating, input),
    getAgent: (input: AgentRef) => getAgent(reads, input),
    listAgents: (input: ListAgentsInput) => listAgents({ agents }, input),
    updateAgent: (input: UpdateAgentInput) => updateAgent({ ...reads, ...tx, ...hold, resolveVerifiedSymbol, guardrails: { apply: applyGuardrailChange } }, input),
    startAgent: (input: AgentRef) => startAgent(reads, input),
    stopAgent: (input: AgentRef) => stopAgent(reads, input),
    deleteAgent: (input: AgentRef) => deleteAgent(reads, input),
    listWhitelist: (input: AgentRef) => listWhitelist({ agents }, input),
    addToWhitelist: (input: AddToWhitelistInput) => addToWhitelist({ agents, ...hold, tokenContractAt: wallet && tokenContractAt(pool, wallet.chain) }, input),
    removeFromWhitelist: (input: RemoveFromWhitelistInput) => removeFromWhitelist({ agents }, input),
    listAgentAudit: (input: ListAgentAuditInput) => listAgentAudit({ agents, audit: (q) => listAudit(pool, q) }, input),
  }
}
