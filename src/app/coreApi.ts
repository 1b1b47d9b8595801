/*
 * `Core`: what the front doors (HTTP routes, the MCP server, the tools a model calls) can ask of
 * the service, declared here by feature. src/app/core.ts builds it; a front door and a tool
 * name this type and import nothing else of the composition root, so no import
 * circle runs through the core. Most members are a domain use case with its dependencies bound
 * (`Bound<typeof quoteSwap>`: `quoteSwap(deps, input)` as `(input) => …`), so a use case's
 * signature is written once, in its own file.
 */
import type { Bound } from '../domain/util/bound.ts'
import type { authenticateKey } from '../domain/accounts/authenticateKey.ts'
import type { createAccount } from '../domain/accounts/createAccount.ts'
import type { createApiKey } from '../domain/accounts/createApiKey.ts'
import type { findOrCreateAccount } from '../domain/accounts/findOrCreateAccount.ts'
import type { getAccount } from '../domain/accounts/getAccount.ts'
import type { issueNonce } from '../domain/accounts/issueNonce.ts'
import type { listApiKeys } from '../domain/accounts/listApiKeys.ts'
import type { describeSession, resolveSession } from '../domain/accounts/resolveSession.ts'
import type { revokeApiKey } from '../domain/accounts/revokeApiKey.ts'
import type { signIn } from '../domain/accounts/signIn.ts'
import type { signOut } from '../domain/accounts/signOut.ts'
import type { updateAccount } from '../domain/accounts/updateAccount.ts'
import type { addToWhitelist } from '../domain/agents/addToWhitelist.ts'
import type { createAgent } from '../domain/agents/createAgent.ts'
import type { depositPaper } from '../domain/paper/depositPaper.ts'
import type { cloneAgent } from '../domain/agents/cloneAgent.ts'
import type { deleteAgent } from '../domain/agents/deleteAgent.ts'
import type { getAgent } from '../domain/agents/getAgent.ts'
import type { listAgentAudit } from '../domain/agents/listAgentAudit.ts'
import type { listAgents } from '../domain/agents/listAgents.ts'
import type { listWhitelist } from '../domain/agents/listWhitelist.ts'
import type { removeFromWhitelist } from '../domain/agents/removeFromWhitelist.ts'
import type { startAgent } from '../domain/agents/startAgent.ts'
import type { stopAgent } from '../domain/agents/stopAgent.ts'
import type { updateAgent } from '../domain/agents/updateAgent.ts'
import type { createAutomation, previewAutomation } from '../domain/automations/createAutomation.ts'
import type { getAutomation, listAutomations } from '../domain/automations/readAutomations.ts'
import type { cancelAutomation, previewTriggerAutomation, previewUpdateAutomation, triggerAutomation, updateAutomation } from '../domain/automations/updateAutomation.ts'
import type { getBilling } from '../domain/billing/getBilling.ts'
import type { getDepositInfo } from '../domain/billing/getDepositInfo.ts'
import type { listCreditTransactions } from '../domain/billing/listCreditTransactions.ts'
import type { awaitChatTurn, getChatTurn } from '../domain/chat/getChatTurn.ts'
import type { listMessages } from '../domain/chat/listMessages.ts'
import type { startChatTurn } from '../domain/chat/startChatTurn.ts'
import type { claimFees, previewClaimFees } from '../domain/fees/claimFees.ts'
import type { getFeeEarnings } from '../domain/fees/getFeeEarnings.ts'
import type { getFeeStats } from '../domain/fees/getFeeStats.ts'
import type { getCandles } from '../domain/intel/getCandles.ts'
import type { getIndicators } from '../domain/intel/getIndicators.ts'
import type { runBacktest } from '../domain/backtest/runBacktest.ts'
import type { getMacroSignals } from '../domain/intel/getMacroSignals.ts'
import type { getTopMovers } from '../domain/intel/getTopMovers.ts'
import type { getYieldOpportunities } from '../domain/intel/getYieldOpportunities.ts'
import type { listAnomalies } from '../domain/intel/listAnomalies.ts'
import type { getLaunch } from '../domain/launches/getLaunch.ts'
import type { launchToken } from '../domain/launches/launchToken.ts'
import type { previewLaunch } from '../domain/launches/previewLaunch.ts'
import type { getLeaderboard } from '../domain/market/getLeaderboard.ts'
import type { getStats } from '../domain/market/getStats.ts'
import type { acceptBid } from '../domain/marketplace/acceptBid.ts'
import type { browseListings, getListing, getMarketHistory } from '../domain/marketplace/browseListings.ts'
import type { buyListing } from '../domain/marketplace/buyListing.ts'
import type { cancelListing } from '../domain/marketplace/cancelListing.ts'
import type { createListing } from '../domain/marketplace/createListing.ts'
import type { endBid } from '../domain/marketplace/endBid.ts'
import type { listMyBids, listReceivedBids } from '../domain/marketplace/listBids.ts'
import type { placeBid } from '../domain/marketplace/placeBid.ts'
import type { getRun, getRuns } from '../domain/runs/getRun.ts'
import type { listRuns } from '../domain/runs/listRuns.ts'
import type { startRun } from '../domain/runs/startRun.ts'
import type { startScheduledRun } from '../domain/runs/startScheduledRun.ts'
import type { stopRun } from '../domain/runs/stopRun.ts'
import type { checkAgentSkills } from '../domain/skills/checkAgentSkills.ts'
import type { createCustomSkill } from '../domain/skills/createCustomSkill.ts'
import type { deleteCustomSkill } from '../domain/skills/deleteCustomSkill.ts'
import type { getCustomSkill } from '../domain/skills/getCustomSkill.ts'
import type { listCustomSkills } from '../domain/skills/listCustomSkills.ts'
import type { listSkillRegistry } from '../domain/skills/listSkillRegistry.ts'
import type { resolveAgentSkills } from '../domain/skills/resolveAgentSkills.ts'
import type { updateCustomSkill } from '../domain/skills/updateCustomSkill.ts'
import type { executeSwap } from '../domain/swaps/executeSwap.ts'
import type { getSwap } from '../domain/swaps/getSwap.ts'
import type { quoteSwap } from '../domain/swaps/quoteSwap.ts'
import type { getPrice } from '../domain/tokens/getPrice.ts'
import type { getToken } from '../domain/tokens/getToken.ts'
import type { listQuoteAssets } from '../domain/tokens/listQuoteAssets.ts'
import type { listStockTokens } from '../domain/tokens/listStockTokens.ts'
import type { listTokens } from '../domain/tokens/listTokens.ts'
import type { listTrades } from '../domain/tokens/listTrades.ts'
import type { getAgentPerformance } from '../domain/wallet/getAgentPerformance.ts'
import type { getPnlLeaderboard } from '../domain/wallet/getPnlLeaderboard.ts'
import type { getPortfolio } from '../domain/wallet/getPortfolio.ts'
import type { getPortfolioHistory } from '../domain/wallet/getPortfolioHistory.ts'
import type { getWalletPortfolio } from '../domain/wallet/getWalletPortfolio.ts'
import type { getWhitelist } from '../domain/wallet/getWhitelist.ts'
import type { listTransactions } from '../domain/wallet/listTransactions.ts'
import type { previewTransfer } from '../domain/wallet/previewTransfer.ts'
import type { transferFunds } from '../domain/wallet/transferFunds.ts'
import type { ServiceError } from '../domain/errors.ts'
import type { agentSchemas } from '../domain/agents/agent.schema.ts'
import type { customSkillSchemas } from '../domain/skills/skill.schema.ts'
import type { CursorSeal } from '../domain/util/cursorSeal.ts'
import type { ChatBusEvent } from '../actors/conversation/chatBus.ts'
import type { modelView } from '../adapters/llm/modelCatalog.ts'
import type { opsUseCases } from './opsUseCases.ts'
import type { createAutomationHooks } from '../actors/automation/automationHooks.ts'
import type { decideApproval, getApproval, listApprovals } from '../domain/approvals/approvals.ts'
import type { platformUseCases } from './platformUseCases.ts'
import type { webhookUseCases } from './webhookUseCases.ts'
import type { policyUseCases } from './policyUseCases.ts'

type AutomationHooks = ReturnType<typeof createAutomationHooks>

export type { Bound }

/** Swaps: quotes and swaps of an agent's wallet. */
export interface SwapUseCases {
  quoteSwap: Bound<typeof quoteSwap>
  executeSwap: Bound<typeof executeSwap>
  getSwap: Bound<typeof getSwap>
}

/** Token launches on the venues or self-funded. */
export interface LaunchUseCases {
  launchToken: Bound<typeof launchToken>
  previewLaunch: Bound<typeof previewLaunch>
  getLaunch: Bound<typeof getLaunch>
}

/** Chat turns with an agent's model. */
export interface ChatUseCases {
  startChatTurn: Bound<typeof startChatTurn>
  /** Waits for a turn's end (`waitMs`: at most; default the service's chat wait). */
  awaitChatTurn(input: { turnId: string; waitMs?: number }): ReturnType<typeof awaitChatTurn>
  getChatTurn: Bound<typeof getChatTurn>
  listMessages: Bound<typeof listMessages>
  /** Live events of a turn (text deltas, tool calls and results) in this process; returns the unsubscribe. */
  subscribeChatTurn(turnId: string, listener: (event: ChatBusEvent) => void): () => void
}

/** Autonomous runs. */
export interface RunUseCases {
  startRun: Bound<typeof startRun>
  getRun: Bound<typeof getRun>
  getRuns: Bound<typeof getRuns>
  listRuns: Bound<typeof listRuns>
  stopRun: Bound<typeof stopRun>
  /** A running agent's tick: starts its scheduled run when one is due (never two at once). */
  startScheduledRun: Bound<typeof startScheduledRun>
  /**
   * The agent stopped: its run in progress ends `stopped` (answers that run's id, or null); with
   * `stoppedBy` (the stop's effect), only a run created before the stop was committed.
   */
  stopAgentRuns(input: { agentId: string; stoppedBy?: string | undefined }): Promise<string | null>
}

/** Custom skills and the skill registry. */
export interface SkillUseCases {
  createCustomSkill: Bound<typeof createCustomSkill>
  listCustomSkills: Bound<typeof listCustomSkills>
  getCustomSkill: Bound<typeof getCustomSkill>
  updateCustomSkill: Bound<typeof updateCustomSkill>
  deleteCustomSkill: Bound<typeof deleteCustomSkill>
  listSkillRegistry: Bound<typeof listSkillRegistry>
  resolveAgentSkills: Bound<typeof resolveAgentSkills>
  /** 422 for entries of an agent's `skills` that the account may not use. */
  checkAgentSkills: Bound<typeof checkAgentSkills>
  /** Custom skill request bodies, validated against the tool names a skill may grant. */
  customSkillSchemas: ReturnType<typeof customSkillSchemas>
  /** The tools an agent's skills grant a model or an automation (read and trade tools only). */
  agentTools(input: { accountId: string; skills: readonly string[] }): Promise<string[]>
}

/** Creator fees. */
export interface FeeUseCases {
  getFeeEarnings: Bound<typeof getFeeEarnings>
  claimFees: Bound<typeof claimFees>
  previewClaimFees: Bound<typeof previewClaimFees>
  getFeeStats: Bound<typeof getFeeStats>
}

/** Tokens, prices and the platform's market figures. */
export interface TokenUseCases {
  listQuoteAssets: Bound<typeof listQuoteAssets>
  listTokens: Bound<typeof listTokens>
  getToken: Bound<typeof getToken>
  listTrades: Bound<typeof listTrades>
  getPrice: Bound<typeof getPrice>
  listStockTokens: Bound<typeof listStockTokens>
  getLeaderboard: Bound<typeof getLeaderboard>
  getStats: Bound<typeof getStats>
}

/** Accounts, API keys and sign-in sessions. */
export interface AccountUseCases {
  createAccount: Bound<typeof createAccount>
  findOrCreateAccount: Bound<typeof findOrCreateAccount>
  getAccount: Bound<typeof getAccount>
  updateAccount: Bound<typeof updateAccount>
  createApiKey: Bound<typeof createApiKey>
  listApiKeys: Bound<typeof listApiKeys>
  revokeApiKey: Bound<typeof revokeApiKey>
  authenticateKey: Bound<typeof authenticateKey>
  issueNonce: Bound<typeof issueNonce>
  signIn: Bound<typeof signIn>
  resolveSession: Bound<typeof resolveSession>
  describeSession: Bound<typeof describeSession>
  signOut: Bound<typeof signOut>
  /** Drops a revoked key from this node's cache (another node revoked it). */
  forgetApiKey(hash: string): void
}

/** Agents, their whitelist and audit trail. */
export interface AgentUseCases {
  createAgent: Bound<typeof createAgent>
  cloneAgent: Bound<typeof cloneAgent>
  getAgent: Bound<typeof getAgent>
  listAgents: Bound<typeof listAgents>
  updateAgent: Bound<typeof updateAgent>
  startAgent: Bound<typeof startAgent>
  stopAgent: Bound<typeof stopAgent>
  deleteAgent: Bound<typeof deleteAgent>
  listWhitelist: Bound<typeof listWhitelist>
  addToWhitelist: Bound<typeof addToWhitelist>
  removeFromWhitelist: Bound<typeof removeFromWhitelist>
  listAgentAudit: Bound<typeof listAgentAudit>
  /** The agents' request bodies, validated against the model catalog, the skills and the strategies. */
  agentSchemas: ReturnType<typeof agentSchemas>
  /** The account's newest agent ids, at most `limit` (a tool's `agent_id` may be left out when there is one). */
  listAgentIds(accountId: string, limit: number): Promise<string[]>
}

/** Transfers, portfolios and transactions; PnL. */
export interface WalletUseCases {
  transferFunds: Bound<typeof transferFunds>
  previewTransfer: Bound<typeof previewTransfer>
  getPortfolio: Bound<typeof getPortfolio>
  depositPaper: Bound<typeof depositPaper>
  getPortfolioHistory: Bound<typeof getPortfolioHistory>
  getWhitelist: Bound<typeof getWhitelist>
  listTransactions: Bound<typeof listTransactions>
  getWalletPortfolio: Bound<typeof getWalletPortfolio>
  getAgentPerformance: Bound<typeof getAgentPerformance>
  getPnlLeaderboard: Bound<typeof getPnlLeaderboard>
}

/** Credits. */
export interface BillingUseCases {
  getBilling: Bound<typeof getBilling>
  listCreditTransactions: Bound<typeof listCreditTransactions>
  /** Where credits are bought on chain (503 `chain_unavailable` without a chain). */
  getDepositInfo: Bound<typeof getDepositInfo>
}

/** The market of agents: listings and bids. */
export interface MarketplaceUseCases {
  createListing: Bound<typeof createListing>
  browseListings: Bound<typeof browseListings>
  getListing: Bound<typeof getListing>
  getMarketHistory: Bound<typeof getMarketHistory>
  cancelListing: Bound<typeof cancelListing>
  buyListing: Bound<typeof buyListing>
  placeBid: Bound<typeof placeBid>
  acceptBid: Bound<typeof acceptBid>
  endBid: Bound<typeof endBid>
  listMyBids: Bound<typeof listMyBids>
  listReceivedBids: Bound<typeof listReceivedBids>
  /** The listing an agent is on sale in, if any. */
  activeListingOf(input: { accountId: string; agentId: string }): Promise<string | null>
}

/** Automations. */
export interface AutomationUseCases {
  /** A `webhook` trigger's creation also answers `hook: { path, secret }`, once. */
  createAutomation(...args: Parameters<Bound<typeof createAutomation>>): Promise<Awaited<ReturnType<Bound<typeof createAutomation>>> & { hook?: Awaited<ReturnType<AutomationHooks['issue']>> }>
  /** A signal webhook's message (POST /hooks/automations/:id/:token): fires the automation once per message id. */
  receiveAutomationHook: AutomationHooks['receive']
  /** A new hook URL token and secret; the previous pair works for `graceSeconds` more (POST /automations/:id/hook/rotate). */
  rotateAutomationHook: AutomationHooks['rotate']
  previewAutomation: Bound<typeof previewAutomation>
  previewUpdateAutomation: Bound<typeof previewUpdateAutomation>
  previewTriggerAutomation: Bound<typeof previewTriggerAutomation>
  getAutomation: Bound<typeof getAutomation>
  listAutomations: Bound<typeof listAutomations>
  updateAutomation: Bound<typeof updateAutomation>
  cancelAutomation: Bound<typeof cancelAutomation>
  triggerAutomation: Bound<typeof triggerAutomation>
}

/** Human approval of wallet operations above the policy's `require_approval_above_usd`. */
export interface ApprovalUseCases {
  listApprovals: Bound<typeof listApprovals>
  getApproval: Bound<typeof getApproval>
  decideApproval: Bound<typeof decideApproval>
}

/** Market intelligence. */
export interface IntelUseCases {
  getCandles: Bound<typeof getCandles>
  getIndicators: Bound<typeof getIndicators>
  getTopMovers: Bound<typeof getTopMovers>
  listAnomalies: Bound<typeof listAnomalies>
  getYieldOpportunities: Bound<typeof getYieldOpportunities>
  getMacroSignals: Bound<typeof getMacroSignals>
  runBacktest: Bound<typeof runBacktest>
}

/** Owners' policies: the account's and each agent's rules over every money move. */
export type PolicyUseCases = ReturnType<typeof policyUseCases>
/** What the front doors need besides the features: health, idempotency keys, actor events, metrics, the faucet. */
export type PlatformUseCases = ReturnType<typeof platformUseCases>

/** The operator's use cases (GET/POST /api/v1/ops/..., the console). */
export type OpsUseCases = ReturnType<typeof opsUseCases>

/** The account's webhook endpoints and their deliveries (built beside `Core`: their events are rendered with it). */
export type WebhookUseCases = ReturnType<typeof webhookUseCases>

/** The catalog, the page cursors and the meaning of a library's error. */
export interface ServiceFacts {
  listModels(): Array<ReturnType<typeof modelView>>
  /** The catalog's model ids and its default (the OpenAPI document names them). */
  modelIds: { models: string[]; defaultModel: string }
  /** Signs the page cursors every front door hands out, and checks those it is given back. */
  cursors: CursorSeal
  /** What a library's error escaping a use case means for a client: a chain node that cannot be reached is 503 `chain_unavailable`, a database with no primary answering 503 `database_unavailable`. */
  serviceErrorOf(err: unknown): ServiceError | undefined
}

/** Everything the service does, as its front doors call it. */
export interface Core
  extends AccountUseCases, AgentUseCases, SwapUseCases, LaunchUseCases, ChatUseCases, RunUseCases, SkillUseCases, FeeUseCases,
    TokenUseCases, WalletUseCases, BillingUseCases, MarketplaceUseCases, AutomationUseCases, ApprovalUseCases, IntelUseCases, PolicyUseCases, PlatformUseCases,
    OpsUseCases, ServiceFacts {}
