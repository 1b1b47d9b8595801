import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import type { ActorRuntime } from '../actors/runtime/index.ts'
import type { WalletDeps } from '../adapters/chain/walletDeps.ts'
import { createSwapChainPorts } from '../adapters/chain/swapAdapters.ts'
import { chainUnavailableOf } from '../adapters/chain/priceReader.ts'
import { isDatabaseUnavailable } from '../adapters/db/primaryHosts.ts'
import { TOOL_NAMES, toolsFor } from '../tools/registry.ts'
import { toolInfo } from '../tools/toolPort.ts'
import { createSwapQuoteStore } from '../adapters/db/swapQuote.store.ts'
import { ChainNotConfiguredError, DatabaseUnavailableError, type ServiceError } from '../domain/errors.ts'
import type { AgentsRepository } from '../domain/agents/ports.ts'
import type { PaperBalances, SwapAgents, SwapPorts } from '../domain/swaps/ports.ts'
import { createPaperStore, paperToken } from '../adapters/db/paper.store.ts'
import { quoteSwap, type QuoteSwapInput } from '../domain/swaps/quoteSwap.ts'
import { executeSwap, type ExecuteSwapInput } from '../domain/swaps/executeSwap.ts'
import { getSwap, type GetSwapInput } from '../domain/swaps/getSwap.ts'
import { startChatTurn, type ChatDeps, type StartChatTurnInput } from '../domain/chat/startChatTurn.ts'
import { awaitChatTurn, getChatTurn } from '../domain/chat/getChatTurn.ts'
import { listMessages } from '../domain/chat/listMessages.ts'
import type { ChatMessagesRepository, ChatModel, ModelProvider } from '../domain/chat/ports.ts'
import type { CreditsRepository } from '../domain/billing/ports.ts'
import { createChatTurns } from '../actors/chatTurn/chatTurns.ts'
import { createRuns } from '../actors/run/runs.ts'
import { firstCallHoldOf } from '../actors/conversation/conversation.effects.ts'
import type { RunInput } from '../domain/runs/ports.ts'
import { startRun, type RunsDeps, type StartRunInput } from '../domain/runs/startRun.ts'
import type { ListMessagesQuery } from '../domain/chat/chat.schema.ts'
import { getRun, getRuns } from '../domain/runs/getRun.ts'
import { listRuns } from '../domain/runs/listRuns.ts'
import { stopRun } from '../domain/runs/stopRun.ts'
import { startScheduledRun, type StartScheduledRunInput } from '../domain/runs/startScheduledRun.ts'
import type { ListRunsQuery, RunLimits } from '../domain/runs/run.schema.ts'
import type { ChatBus, ChatBusEvent } from '../actors/conversation/chatBus.ts'
import { MODEL_SCOPES } from '../actors/conversation/toolCall.effects.ts'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Config } from '../config.ts'
import { createCustomSkillsRepository } from '../adapters/db/customSkills.repository.ts'
import { BUILTIN_TOOL_NAMES } from '../domain/skills/builtinSkills.ts'
import type { SkillsDeps } from '../domain/skills/ports.ts'
import { customSkillSchemas } from '../domain/skills/skill.schema.ts'
import { createCustomSkill, type CreateCustomSkillInput } from '../domain/skills/createCustomSkill.ts'
import { listCustomSkills, type ListCustomSkillsInput } from '../domain/skills/listCustomSkills.ts'
import { getCustomSkill, type GetCustomSkillInput } from '../domain/skills/getCustomSkill.ts'
import { updateCustomSkill, type UpdateCustomSkillInput } from '../domain/skills/updateCustomSkill.ts'
import { deleteCustomSkill, type DeleteCustomSkillInput } from '../domain/skills/deleteCustomSkill.ts'
import { listSkillRegistry, type ListSkillRegistryInput } from '../domain/skills/listSkillRegistry.ts'
import { resolveAgentSkills, type ResolveAgentSkillsInput } from '../domain/skills/resolveAgentSkills.ts'
import { checkAgentSkills } from '../domain/skills/checkAgentSkills.ts'
import type { Logger } from '../logger.ts'
import { createTokenPrices } from '../adapters/chain/tokenAdapters.ts'
import { createFeeChainPorts } from '../adapters/chain/feeAdapters.ts'
import { createTokenBoardStore } from '../adapters/db/tokenBoard.store.ts'
import { createMarketStatsStore } from '../adapters/db/marketStats.store.ts'
import { createMemo } from '../domain/util/memo.ts'
import type { FeePorts } from '../domain/fees/ports.ts'
import type { GetFeeEarningsInput, ClaimFeesInput, PlanClaimInput } from '../domain/fees/fees.schema.ts'
import { getFeeEarnings } from '../domain/fees/getFeeEarnings.ts'
import { claimFees, previewClaimFees } from '../domain/fees/claimFees.ts'
import { getFeeStats } from '../domain/fees/getFeeStats.ts'
import type { GetPriceInput, GetTokenInput, ListQuoteAssetsInput, ListTokensInput, ListTradesInput } from '../domain/tokens/tokens.schema.ts'
import { listTokens } from '../domain/tokens/listTokens.ts'
import { getToken } from '../domain/tokens/getToken.ts'
import { listTrades } from '../domain/tokens/listTrades.ts'
import { getPrice } from '../domain/tokens/getPrice.ts'
import { listQuoteAssets } from '../domain/tokens/listQuoteAssets.ts'
import { listStockTokens } from '../domain/tokens/listStockTokens.ts'
import { getLeaderboard, type GetLeaderboardInput } from '../domain/market/getLeaderboard.ts'
import { getStats } from '../domain/market/getStats.ts'
import { createWalletStore } from '../adapters/db/wallet.store.ts'
import { createWalletOperations } from '../actors/walletOp/walletOps.ts'
import { createPolicyGate } from '../actors/walletOp/policyGate.ts'
import { createLaunchPorts } from '../adapters/chain/launchAdapters.ts'
import type { LaunchPorts } from '../domain/launches/ports.ts'
import { createLaunchActors, createLaunchSpend } from '../actors/launch/launches.ts'
import { launchToken, type LaunchTokenInput } from '../domain/launches/launchToken.ts'
import { previewLaunch } from '../domain/launches/previewLaunch.ts'
import { getLaunch, type GetLaunchInput } from '../domain/launches/getLaunch.ts'
import type { LaunchRequest } from '../domain/launches/launch.schema.ts'
import { billingUseCases } from './billingUseCases.ts'
import type { GetDepositInfoDeps } from '../domain/billing/getDepositInfo.ts'
import { modelView, type Model } from '../adapters/llm/modelCatalog.ts'
import { createCursorSeal } from '../domain/util/cursorSeal.ts'
import { marketplaceUseCases } from './marketplaceUseCases.ts'
import { walletUseCases } from './walletUseCases.ts'
import { automationUseCases } from './automationUseCases.ts'
import { approvalUseCases } from './approvalUseCases.ts'
import { createIntelPorts, intelUseCases, tokenFacts } from './coreIntel.ts'
import { platformUseCases, type PlatformAdapters } from './platformUseCases.ts'
import { opsUseCases } from './opsUseCases.ts'
import { policyUseCases } from './policyUseCases.ts'
import { accountUseCases, agentUseCases } from './identityUseCases.ts'
import { createAgentRowCache } from '../domain/agents/agentRowCache.ts'
import { readOwnedAgent } from '../domain/agents/getAgent.ts'
import { createAgentActors } from '../actors/agent/agentActors.ts'
import { agentKind } from '../actors/agent/agent.machine.ts'
import { runtimeServiceErrorOf } from './runtimeErrors.ts'
import type { Core } from './coreApi.ts'
import { PLATFORM_FIGURES_TTL_MS, type CoreAdapters } from './coreAdapters.ts'

export type { Core }
export type { ChatAdapters, CoreAdapters, IdentityAdapters } from './coreAdapters.ts'
export { PLATFORM_FIGURES_TTL_MS }


/**
 * The composition root: builds the ports once from the adapters and returns the use cases.
 * Routes (and next, tools, MCP and effect handlers) take `core`; nothing else wires dependencies.
 *
 * @example
 * const core = createCore({ pool, runtime, wallet, agents })
 * const quote = await core.quoteSwap(readSwapRequest(accountId, body))
 */
export function createCore(adapters: CoreAdapters): Core {
  const { pool, runtime, wallet, agents, logger } = adapters
  const walletOps = createWalletOperations({ pool, runtime, usdValueOf: createWalletStore(pool).usdValueOf }) // swaps, transfers, claims as actors
  // The agents' states are their actors': read through the runtime's read model.
  const agentStateReads = { agentStates: (ids: readonly string[]) => runtime.read.statesOf(agentKind.kind, ids), agentCounts: () => runtime.read.countsOf(agentKind.kind) }
  // A skill may name any tool of the registry, and the planned ones the built-in skills name.
  const skillPorts: SkillsDeps = {
    skills: createCustomSkillsRepository({ pool, em: adapters.identity.em, agentStates: agentStateReads.agentStates }),
    toolNames: new Set([...TOOL_NAMES, ...BUILTIN_TOOL_NAMES]),
    newId: randomUUID,
  }
  // What an agent's skills give its model: the tools it may call (those its skills grant, built-in
  // and custom, among the read and trade tools) and their text for the system prompt.
  const agentSkills = async (accountId: string, skills: readonly string[]) => {
    const resolved = await resolveAgentSkills(skillPorts, { accountId, skills })
    return { tools: toolsFor({ scopes: MODEL_SCOPES, granted: new Set(resolved.tools) }).map((t) => t.name), instructions: resolved.instructions }
  }
  // Agent rows held in memory for 2 s (dropped by a write on this node): the agent reads of the API, chat turns and runs.
  const agentRows = createAgentRowCache({ ttlMs: 2000 })
  const agentReads = { agents, actors: createAgentActors({ runtime }), rows: agentRows }
  const ownedAgent = (accountId: string, agentId: string) => readOwnedAgent(agentReads, { accountId, agentId })
  const chat = chatPortsOf(adapters, agentSkills, ownedAgent)
  const swapPorts: SwapPorts | undefined = wallet && {
    agents: swapAgentsOf(agents),
    quotes: createSwapQuoteStore(pool),
    ...createSwapChainPorts({ pool, wallet }),
    operations: walletOps.swaps,
    clock: { now: () => Date.now() },
    newId: randomUUID,
    paper: paperBalancesOf(pool),
    policies: createPolicyGate(pool),
  }
  const swaps = () => {
    if (!swapPorts) throw new ChainNotConfiguredError()
    return swapPorts
  }
  const board = createTokenBoardStore(pool)
  const tokenPorts = { prices: createTokenPrices({ chain: wallet?.chain, logger }), board }
  const marketPorts = { prices: tokenPorts.prices, stats: createMarketStatsStore(pool, agentStateReads), memo: createMemo(PLATFORM_FIGURES_TTL_MS) }
  const intelPorts = createIntelPorts({ pool, prices: tokenPorts.prices, ttlMs: PLATFORM_FIGURES_TTL_MS })
  const feeChain = wallet && { ...createFeeChainPorts({ pool, wallet }), operations: walletOps.claims }
  const feePorts = (): FeePorts => {
    if (!feeChain) throw new ChainNotConfiguredError()
    return { agents, tokens: board, ...feeChain, prices: marketPorts.prices, stats: marketPorts.stats }
  }
  const launchPorts: LaunchPorts | undefined = wallet && { ...createLaunchPorts({ pool, wallet, agents }), actors: createLaunchActors(pool, runtime), spend: createLaunchSpend(pool), newId: randomUUID, policies: createPolicyGate(pool) }
  const launches = () => {
    if (!launchPorts) throw new ChainNotConfiguredError()
    return launchPorts
  }
  const wallets = walletUseCases(adapters, walletOps, () => tokenFacts(intelPorts))
  const features = {
    quoteSwap: (input: QuoteSwapInput) => quoteSwap(swaps(), input),
    executeSwap: (input: ExecuteSwapInput) => executeSwap(swaps(), input),
    getSwap: (input: GetSwapInput) => getSwap(swaps(), input),
    ...accountUseCases(adapters),
    ...agentUseCases(adapters, agentRows),
    launchToken: (input: LaunchTokenInput) => launchToken(launches(), input),
    previewLaunch: (input: LaunchRequest) => previewLaunch(launches(), input),
    getLaunch: (input: GetLaunchInput) => getLaunch(launches(), input),
    /** The account's newest agent ids, at most `limit` (a tool's `agent_id` may be left out when there is one). */
    listAgentIds: async (accountId: string, limit: number) => (await agents.list(accountId, { limit })).map((a) => a.id),
    startChatTurn: (input: StartChatTurnInput) => startChatTurn(chat.deps, input),
    awaitChatTurn: (input: { turnId: string; waitMs?: number }) => awaitChatTurn(chat.deps, { turnId: input.turnId, waitMs: input.waitMs ?? chat.waitMs }),
    getChatTurn: (input: { accountId: string; agentId: string; turnId: string }) => getChatTurn(chat.deps, input),
    listMessages: (input: { accountId: string; agentId: string; query: ListMessagesQuery }) => listMessages({ agents, messages: chat.messages }, input),
    /** Live events of a turn (text deltas, tool calls and results) in this process; returns the unsubscribe. */
    subscribeChatTurn: (turnId: string, listener: (event: ChatBusEvent) => void) => chat.bus.subscribe(turnId, listener),
    ...runUseCases(adapters, agentSkills, ownedAgent),
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
    /** The tools an agent's skills grant a model or an automation (read and trade tools only). */
    agentTools: async (input: { accountId: string; skills: readonly string[] }) => (await agentSkills(input.accountId, input.skills)).tools,
    /** 422 for entries of an agent's `skills` that the account may not use. */
    checkAgentSkills: (input: ResolveAgentSkillsInput) => checkAgentSkills(skillPorts, input),
    getFeeEarnings: (input: GetFeeEarningsInput) => getFeeEarnings(feePorts(), input),
    claimFees: (input: ClaimFeesInput) => claimFees(feePorts(), input),
    previewClaimFees: (input: PlanClaimInput) => previewClaimFees(feePorts(), input),
    getFeeStats: () => getFeeStats(marketPorts),
    listQuoteAssets: (input: ListQuoteAssetsInput) => listQuoteAssets(tokenPorts, input),
    listTokens: (input: ListTokensInput) => listTokens(tokenPorts, input),
    getToken: (input: GetTokenInput) => getToken(tokenPorts, input),
    listTrades: (input: ListTradesInput) => listTrades(tokenPorts, input),
    getPrice: (input: GetPriceInput) => getPrice(tokenPorts, input),
    listStockTokens: () => listStockTokens(tokenPorts),
    getLeaderboard: (input: GetLeaderboardInput) => getLeaderboard(marketPorts, input),
    getStats: () => getStats(marketPorts),
    ...intelUseCases(intelPorts),
    ...wallets,
    ...billingUseCases(adapters),
    ...approvalUseCases({ pool, runtime, swapAgents: swapAgentsOf(agents), swapPorts }),
    ...policyUseCases(adapters, { swaps: swapPorts, launches: launchPorts }),
    listModels: () => [...adapters.models.values()].map(modelView),
    /** Signs the page cursors every front door hands out, and checks those it is given back. */
    cursors: createCursorSeal({ masterKey: adapters.identity.masterKey }),
    ...marketplaceUseCases(adapters, wallet && { portfolio: wallets.getPortfolio, feeEarnings: (i) => getFeeEarnings(feePorts(), i) }, agents, agentRows),
    ...automationUseCases(adapters, {
      grantedTools: async (accountId, skills) => (await agentSkills(accountId, skills)).tools,
      resolveToken: async (ref) => ((r) => (r && 'token' in r ? r.token : undefined))(await swapPorts?.tokens.lookup(ref)),
      priceUsd: (ref) => getPrice(tokenPorts, { tokens: [ref], field: 'tokens' }).then((r) => r.prices[0]?.priceUsd ?? null, () => null),
    }, agents),
    serviceErrorOf,
    /** The catalog's model ids and its default (the OpenAPI document names them). */
    modelIds: { models: [...adapters.models.keys()], defaultModel: chat.deps.defaultModel.id },
  }
  const chain = wallet?.chain
  return { ...features, ...platformUseCases({ ...adapters, chain }), ...opsUseCases({ pool, runtime, chain, credits: adapters.credits, features }) }
}



/**
 * What a library's error escaping a use case means for a client: a chain node that cannot be
 * reached is 503 `chain_unavailable`; a database with no primary answering, 503 `database_unavailable`.
 */
function serviceErrorOf(err: unknown): ServiceError | undefined {
  return chainUnavailableOf(err) ?? (isDatabaseUnavailable(err) ? new DatabaseUnavailableError(err) : undefined) ?? runtimeServiceErrorOf(err)
}

/** A paper agent's virtual balances, as a swap checks them. */
function paperBalancesOf(pool: pg.Pool): PaperBalances {
  const store = createPaperStore(pool)
  return {
    balanceOf: async (agentId, token) => (await store.balances(agentId)).get(paperToken(token)) ?? 0n,
    pool: async (agentId, token) => (await store.pools(agentId)).get(token),
  }
}

/** The swap's view of the agents repository: the wallet, the effective policy and the status. */
function swapAgentsOf(agents: AgentsRepository): SwapAgents {
  return {
    async forSwap(accountId, agentId) {
      const agent = await agents.findOwned(accountId, agentId)
      return agent && { wallet: agent.walletAddress, policy: agent.policy, status: agent.status, listingId: agent.listingId, mode: agent.mode }
    },
  }
}


/** Autonomous runs (src/domain/runs): the run actor's use cases. */
function runUseCases({ pool, runtime, agents, chat }: CoreAdapters, agentSkills: RunsDeps['agentSkills'], agent: RunsDeps['agent']) {
  // A run holds its first model call's credits in its own insert (the call then holds nothing).
  const hold = {
    credits: chat.credits,
    creditsOf: (run: RunInput) => {
      const model = chat.models.get(run.model)
      return model && firstCallHoldOf({ find: toolInfo }, { system: run.system, firstMessage: run.goal, tools: run.tools, model, maxTokens: chat.limits.maxTokens })
    },
  }
  const runs = createRuns({ pool, runtime, hold })
  const deps: RunsDeps = {
    agents,
    agent,
    models: chat.models,
    defaultModel: chat.defaultModel,
    provider: chat.provider,
    credits: chat.credits,
    runs,
    agentSkills,
    limits: { ...chat.runs, maxTokens: chat.limits.maxTokens },
    newId: randomUUID,
  }
  return {
    startRun: (input: StartRunInput) => startRun(deps, input),
    getRun: (input: { accountId: string; runId: string }) => getRun(deps, input),
    getRuns: (input: { refs: ReadonlyArray<{ accountId: string; runId: string }> }) => getRuns(deps, input),
    listRuns: (input: { accountId: string; agentId: string; query: ListRunsQuery }) => listRuns(deps, input),
    stopRun: (input: { accountId: string; runId: string }) => stopRun({ runs, waitMs: chat.runs.stopWaitMs }, input),
    /** A running agent's tick: starts its scheduled run when one is due (never two at once). */
    startScheduledRun: (input: StartScheduledRunInput) => startScheduledRun({ ...deps, now: () => new Date() }, input),
    /** The agent stopped: its run in progress ends `stopped` (only one created before the stop, with `stoppedBy`). */
    stopAgentRuns: (input: { agentId: string; stoppedBy?: string | undefined }) => runs.stopActive(input.agentId, { stoppedBy: input.stoppedBy }),
  }
}

function chatPortsOf({ pool, runtime, agents, chat }: CoreAdapters, agentSkills: ChatDeps['agentSkills'], agent: ChatDeps['agent']) {
  const deps: ChatDeps = {
    agents,
    agent,
    agentSkills,
    models: chat.models,
    defaultModel: chat.defaultModel,
    provider: chat.provider,
    credits: chat.credits,
    turns: createChatTurns({ runtime }),
    limits: chat.limits,
    newId: randomUUID,
  }
  return { deps, messages: chat.messages, bus: chat.bus, waitMs: chat.limits.waitMs }
}
