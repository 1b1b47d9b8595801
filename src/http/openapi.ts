import { z } from 'zod'
import type { Op } from './openapiOp.ts'
import { agentSchemas, whitelistAddBody, whitelistDeleteBody, whitelistDeleteQuery } from '../domain/agents/agent.schema.ts'
import { cloneAgentBody, paperDepositBody } from '../domain/paper/paper.schema.ts'
import { launchBody, previewBody } from '../domain/launches/launch.schema.ts'
import { swapInput } from '../domain/swaps/swap.schema.ts'
import { SKILL_SLUGS, STRATEGY_SLUGS } from '../domain/skills/builtinSkills.ts'
import { pagingQuery } from './validate.ts'
import { agentResponse, chatAnswerResponse, chatMessageResponse, priceResponse, skillResponse, strategyResponse, whitelistEntryResponse } from './responseSchemas.ts'
import { chatRequestSchema, listMessagesQuerySchema } from '../domain/chat/chat.schema.ts'
import { createKeyBody, profileBody, siweBody } from '../domain/accounts/account.schema.ts'
import { faucetBody } from './routes/dev.routes.ts'
import { claimBody, earningsQuery } from './routes/fees.routes.ts'
import { leaderboardQuery, priceQuery } from './routes/market.routes.ts'
import { auditQuery, listQuery, verifiedBody } from './routes/ops.routes.ts'
import { deadLettersQuery, operationsQuery, reasonBody, timelineQuery } from './routes/opsConsole.routes.ts'
import { boardQuery, quotesQuery, tradesQuery } from './routes/tokens.routes.ts'
import { txQuery } from './routes/wallet.routes.ts'
import { portfolioInput, transferInput } from '../domain/wallet/wallet.schema.ts'
import { billingTransactionsQuery } from './routes/billing.routes.ts'
import { customSkillSchemas, registryQuery } from '../domain/skills/skill.schema.ts'
import { BUILTIN_TOOL_NAMES } from '../domain/skills/builtinSkills.ts'
import { customSkillResponse, registrySkillResponse } from './responseSchemas.ts'
import { mcpCallBody } from '../mcp/mcpRoutes.ts'
import { runResponse } from './responseSchemas.ts'
import { automationResponse, bidResponse, listingResponse, ownListingResponse } from './responseSchemas.ts'
import { createAutomationSchema, listAutomationsSchema, updateAutomationSchema, rotateHookSchema } from '../domain/automations/automation.schema.ts'
import { browseListingsQuery, createListingBody, ownPageQuery, placeBidBody } from '../domain/marketplace/marketplace.schema.ts'
import { DEFAULT_RUN_LIMITS, listRunsQuerySchema, startRunSchema } from '../domain/runs/run.schema.ts'
import { anomaliesQuery, candlesQuery, indicatorsQuery, macroQuery, topMoversQuery, yieldQuery } from '../domain/intel/intel.schema.ts'
import { performanceQuery, walletPortfolioQuery } from '../domain/wallet/wallet.schema.ts'
import { webhookOps } from './openapiWebhooks.ts'
import { approvalOps } from './openapiApprovals.ts'
import { policyOps } from './openapiPolicies.ts'
import { backtestOps } from './openapiBacktests.ts'
import { anomaliesResponse, candlesResponse, indicatorsResponse, macroResponse, topMoversResponse, walletPortfolioResponse, yieldResponse } from './intelResponseSchemas.ts'

const mcpToolsResponse = {
  type: 'object',
  required: ['tools'],
  properties: {
    tools: {
      type: 'array',
      items: { type: 'object', required: ['name', 'description', 'inputSchema'], properties: { name: { type: 'string' }, description: { type: 'string' }, inputSchema: { type: 'object' }, annotations: { type: 'object' } } },
    },
  },
}
/** GET /auth/session/state: `{ signedIn: false }`, or `signedIn: true` with the session. */
const sessionStateResponse = { type: 'object', required: ['signedIn'], properties: { signedIn: { type: 'boolean' } } }
const sessionResponse = {
  type: 'object',
  required: ['accountId', 'address', 'isOperator', 'expiresAt', 'csrfToken'],
  properties: {
    accountId: { type: 'string', format: 'uuid' },
    address: { type: ['string', 'null'], description: 'The signing address (lower case)' },
    isOperator: { type: 'boolean' },
    expiresAt: { type: 'string', format: 'date-time' },
    csrfToken: { type: 'string', description: 'Send as X-CSRF-Token with every write made with this cookie' },
  },
}
const mcpCallResponse = { type: 'object', required: ['result'], properties: { result: {} } }


/** JSON Schema of what a client sends (the input side of transforms). */
const schema = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' })

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const withMeta = (body: object) => ({ allOf: [body, { type: 'object', required: ['meta'], properties: { meta: ref('Meta') } }] })
const resource = (name: string, extra?: Record<string, object>) =>
  extra ? { allOf: [ref(name), { type: 'object', properties: extra, required: Object.keys(extra) }] } : ref(name)
const list = (key: string, name: string, paged: boolean) => ({
  type: 'object',
  required: [key, ...(paged ? ['nextCursor'] : [])],
  properties: { [key]: { type: 'array', items: ref(name) }, ...(paged ? { nextCursor: { type: ['string', 'null'] } } : {}) },
})
const output = (s: z.ZodType) => z.toJSONSchema(s, { io: 'output', target: 'draft-2020-12' })

const queryParams = (s: z.ZodType) => {
  const json = schema(s) as { properties?: Record<string, object>; required?: string[] }
  return Object.entries(json.properties ?? {}).map(([name, p]) => ({ name, in: 'query', required: json.required?.includes(name) ?? false, schema: p }))
}

/** The registry (public) and an account's custom skills. */
function skillOps(): Op[] {
  const customSkills = customSkillSchemas({ toolNames: BUILTIN_TOOL_NAMES })
  const customSkill = resource('CustomSkill')
  return [
    { method: 'get', path: '/skills/registry', summary: 'Public custom skills of every account, newest first', query: pagingQuery.extend(registryQuery.shape), response: list('skills', 'RegistrySkill', true) },
    { method: 'get', path: '/skills/custom', summary: 'Own custom skills, newest first', auth: 'read', query: pagingQuery, response: list('skills', 'CustomSkill', true) },
    { method: 'post', path: '/skills/custom', summary: 'Create a custom skill (data only)', auth: 'trade', body: customSkills.create, status: 201, idempotency: 'honoured', response: customSkill },
    { method: 'get', path: '/skills/custom/{id}', summary: 'One own custom skill', auth: 'read', response: customSkill },
    { method: 'patch', path: '/skills/custom/{id}', summary: 'Change a custom skill', auth: 'trade', body: customSkills.update, response: customSkill },
    { method: 'delete', path: '/skills/custom/{id}', summary: 'Delete a custom skill', auth: 'trade', response: resource('CustomSkill', { deleted: { const: true } }) },
  ]
}

const MARKETPLACE_SCHEMAS = { Listing: output(listingResponse), OwnListing: output(ownListingResponse), Bid: output(bidResponse) }

/** The market of agents: listings (public reads), sales and bids. */
function marketplaceOps(): Op[] {
  const listing = ref('Listing')
  const bids = list('bids', 'Bid', true)
  return [
    { method: 'get', path: '/market', summary: 'Active listings with public agent cards (sort: newest or price)', query: browseListingsQuery, response: list('listings', 'Listing', true) },
    { method: 'get', path: '/market/{id}', summary: 'One listing, any status', response: listing },
    { method: 'post', path: '/market', summary: 'List an agent for sale (it is paused, reason listed, until sold or cancelled)', auth: 'trade', body: createListingBody, status: 201, idempotency: 'honoured', response: listing },
    { method: 'delete', path: '/market/{id}', summary: 'Cancel your listing (the agent back to stopped)', auth: 'trade', response: listing },
    { method: 'post', path: '/market/{id}/buy', summary: 'Buy a listing: one transaction, 5% platform fee paid by the seller; 409 listing_unavailable, 402, 422 own', auth: 'trade', idempotency: 'honoured', response: listing },
    { method: 'get', path: '/market/history', summary: 'Your listings and purchases, newest first', auth: 'read', query: ownPageQuery, response: list('listings', 'OwnListing', true) },
    { method: 'post', path: '/market/{id}/bids', summary: 'Bid credits on a listing (reserved until it ends)', auth: 'trade', body: placeBidBody, status: 201, idempotency: 'honoured', response: ref('Bid') },
    { method: 'get', path: '/market/bids', summary: 'Your bids, newest first', auth: 'read', query: ownPageQuery, response: bids },
    { method: 'get', path: '/market/bids/received', summary: 'Bids on your listings, newest first', auth: 'read', query: ownPageQuery, response: bids },
    { method: 'post', path: '/market/bids/{bidId}/accept', summary: 'Accept a bid: settled as a buy at the bid price', auth: 'trade', idempotency: 'honoured', response: listing },
    { method: 'post', path: '/market/bids/{bidId}/reject', summary: 'Reject a bid on your listing (credits released)', auth: 'trade', response: ref('Bid') },
    { method: 'delete', path: '/market/bids/{bidId}', summary: 'Withdraw your bid (credits released)', auth: 'trade', response: ref('Bid') },
  ]
}

/** Automations: a trigger and an action of an agent (DCA, limit orders, snipers, protective orders, TWAPs). */
function automationOps(): Op[] {
  const automation = ref('Automation')
  return [
    {
      method: 'post', path: '/automations', auth: 'trade', body: createAutomationSchema, status: 201, idempotency: 'honoured', response: automation,
      summary: 'Create an automation: kind dca, limit, sniper, stop_loss, take_profit, trailing_stop, bracket or twap with its parameters, or a trigger and an action; 422 names each bad field',
    },
    { method: 'get', path: '/automations', summary: 'Your automations, newest first (?agent_id=, ?status=, ?kind=)', auth: 'read', query: listAutomationsSchema, response: list('automations', 'Automation', true) },
    { method: 'get', path: '/automations/{id}', summary: 'An automation with its last firings', auth: 'read', response: automation },
    { method: 'patch', path: '/automations/{id}', summary: 'Pause (status paused), resume or re-arm (armed), rename, change parameters; 409 once completed or cancelled', auth: 'trade', body: updateAutomationSchema, response: automation },
    { method: 'delete', path: '/automations/{id}', summary: 'Cancel an automation (a firing in flight ends first)', auth: 'trade', response: automation },
    { method: 'get', path: '/automations/{id}/events', summary: 'Follow an automation: Server-Sent Events of each status until completed or cancelled (Last-Event-ID resumes)', auth: 'read', responseType: 'text/event-stream' },
    { method: 'post', path: '/automations/{id}/trigger', summary: 'Fire now, once (after a firing in flight); 409 when paused, completed or cancelled', auth: 'trade', response: automation },
    {
      method: 'post', path: '/automations/{id}/hook/rotate', auth: 'trade', body: rotateHookSchema,
      summary: "A signal webhook's new URL and secret, shown once; the previous pair keeps working for graceSeconds (default 3600, 0: not at all); 404 without a webhook trigger",
      response: { type: 'object', required: ['url', 'secret', 'previousValidUntil'], properties: { url: { type: 'string' }, secret: { type: 'string' }, previousValidUntil: { type: ['string', 'null'], format: 'date-time' } } },
    },
  ]
}

/** Launches and swaps followed as Server-Sent Events (runs: with the run routes). */
function streamOps(): Op[] {
  return [
    { method: 'get', path: '/launch/{id}/events', summary: 'Follow a launch: Server-Sent Events until live or failed (Last-Event-ID resumes)', auth: 'read', responseType: 'text/event-stream' },
    { method: 'get', path: '/swap/{id}/events', summary: 'Follow a swap: Server-Sent Events until confirmed or failed (Last-Event-ID resumes)', auth: 'read', responseType: 'text/event-stream' },
  ]
}

/** The operator console's routes (operator accounts only; every action audited with its reason). */
function opsConsoleOps(): Op[] {
  const action = (path: string, summary: string): Op => ({ method: 'post', path, summary, auth: 'operator', body: reasonBody })
  return [
    { method: 'get', path: '/ops/overview', summary: 'Counts per kind and state, work, effects, dead letters, stuck actors, credits, chain lag', auth: 'operator' },
    {
      method: 'get', path: '/ops/actors/{id}/timeline', auth: 'operator', query: timelineQuery,
      summary: 'One actor: a page of its timeline (events, effects with attempts, timers pending and fired, children, dead letters), newest page first; nextCursor pages to older; its transactions with fees and replacements',
    },
    { method: 'get', path: '/ops/actors/{id}/events', summary: 'One actor as Server-Sent Events (Last-Event-ID resumes)', auth: 'operator', responseType: 'text/event-stream' },
    { method: 'get', path: '/ops/agents/{id}', summary: "One agent's card: status, portfolio, spend against caps, flags, runs, turns, automations, audit", auth: 'operator' },
    { method: 'get', path: '/ops/agents/{id}/operations', summary: "An agent's swaps, transfers, fee claims and launches, newest first, each with the chat turn, run or automation that started it", auth: 'operator', query: operationsQuery },
    { method: 'get', path: '/ops/agents/{id}/value-history', summary: "An agent's portfolio value over time, valued on chain at past blocks", auth: 'operator' },
    { method: 'get', path: '/ops/dead-letters', summary: 'Dead letters not yet resolved, newest first', auth: 'operator', query: deadLettersQuery },
    action('/ops/dead-letters/{seq}/retry', "Enqueue a dead letter's event again, through the actor's machine (audited); 409 retry_moves_funds for an event that would start a launch's transaction"),
    action('/ops/dead-letters/{seq}/discard', 'Drop a dead letter (audited)'),
    action('/ops/actors/{id}/unstick', "Clear an actor's stuck mark (audited)"),
    action('/ops/agents/{id}/pause', "Set an agent's kill switch (audited)"),
    action('/ops/runs/{id}/cancel', 'Stop a run (audited)'),
  ]
}

/** Operator routes (operator accounts only). */
function operatorOps(): Op[] {
  return [
    { method: 'get', path: '/ops/actors', summary: 'Actors of every account', auth: 'operator', query: listQuery },
    { method: 'get', path: '/ops/audit', summary: 'The audit trail of every account, newest first', auth: 'operator', query: auditQuery },
    { method: 'get', path: '/ops/actors/counts', summary: 'Actors counted by kind and status', auth: 'operator' },
    { method: 'get', path: '/ops/nodes', summary: 'The node processes with the shards and roles each holds', auth: 'operator' },
    { method: 'get', path: '/ops/actors/{id}', summary: 'One actor: snapshot, timers, effects, journal', auth: 'operator' },
    ...opsConsoleOps(),
    { method: 'post', path: '/ops/tokens/{address}/verified', summary: 'Mark a launched token verified (or not)', auth: 'operator', body: verifiedBody },
    { method: 'get', path: '/metrics', summary: 'Prometheus metrics (at the root, not under /api/v1)', auth: 'operator', atRoot: true, responseType: 'text/plain' },
  ]
}

/** Hosted chat: a turn, its answer, the history. */
function chatOps(): Op[] {
  return [
    {
      method: 'post', path: '/agents/{id}/chat', auth: 'trade', body: chatRequestSchema, response: ref('ChatAnswer'),
      summary: 'One chat turn: 200 with the answer, 202 { id, status } past the wait, or Server-Sent Events (stream: true or Accept: text/event-stream)',
    },
    { method: 'get', path: '/agents/{id}/chat/{turnId}', summary: 'A chat turn: its answer once ended (202 { id, status } before)', auth: 'read', response: ref('ChatAnswer') },
    { method: 'get', path: '/agents/{id}/chat/{turnId}/events', summary: 'Follow a chat turn: Server-Sent Events of its states until completed or failed (Last-Event-ID resumes)', auth: 'read', responseType: 'text/event-stream' },
    {
      method: 'get', path: '/agents/{id}/messages', summary: 'Chat history, newest first (before: an ISO time)', auth: 'read', query: listMessagesQuerySchema,
      response: { type: 'object', required: ['messages', 'hasMore'], properties: { messages: { type: 'array', items: ref('ChatMessage') }, hasMore: { type: 'boolean' } } },
    },
    ...runOps(),
  ]
}

/** Autonomous runs: start, list, read, stop. */
function runOps(): Op[] {
  return [
    {
      method: 'post', path: '/agents/{id}/runs', auth: 'trade', body: startRunSchema(DEFAULT_RUN_LIMITS), response: output(runResponse), status: 202, idempotency: 'honoured',
      summary: 'Start an autonomous run (budgets: maxSteps 10/50, maxCredits 500/10000, maxSeconds 600/3600 default/ceiling); 409 run_in_progress',
    },
    {
      method: 'get', path: '/agents/{id}/runs', summary: "An agent's runs, newest first (?status=)", auth: 'read', query: listRunsQuerySchema,
      response: { type: 'object', required: ['runs', 'nextCursor'], properties: { runs: { type: 'array', items: output(runResponse) }, nextCursor: { type: ['string', 'null'] } } },
    },
    { method: 'get', path: '/runs/{id}', summary: 'A run: status, budgets and their use, steps, tool calls, credits, summary', auth: 'read', response: output(runResponse) },
    { method: 'get', path: '/runs/{id}/events', summary: 'Follow a run: Server-Sent Events until it ends (Last-Event-ID resumes)', auth: 'read', responseType: 'text/event-stream' },
    { method: 'post', path: '/runs/{id}/stop', summary: 'Stop a run: nothing new starts, what is in flight completes; answers the run once it ended', auth: 'trade', response: output(runResponse) },
  ]
}

/** Market intelligence from the index (public), and the reference client's portfolio. */
function intelOps(): Op[] {
  return [
    { method: 'get', path: '/tokens/{address}/candles', summary: 'OHLCV candles of a token with a known pool (address or symbol; quote and USD), gaps filled flat', query: candlesQuery, response: output(candlesResponse) },
    { method: 'get', path: '/indicators', summary: 'RSI, EMA, SMA, MACD of a token with a known pool (mint: address, ETH/WETH, a stock or verified symbol); 422 on too few candles', query: indicatorsQuery, response: output(indicatorsResponse) },
    { method: 'get', path: '/signals/top-movers', summary: 'Launched tokens that moved or traded most', query: topMoversQuery, response: output(topMoversResponse) },
    { method: 'get', path: '/signals/anomalies', summary: 'Whale swaps, liquidity moves, volume spikes, large transfers, detected per block', query: anomaliesQuery, response: output(anomaliesResponse) },
    { method: 'get', path: '/signals/yield', summary: 'AMM pools: APY from 24 h LP fees over TVL, and a risk', query: yieldQuery, response: output(yieldResponse) },
    { method: 'get', path: '/signals/macro', summary: 'Stablecoin flow, ETH dominance, breadth, volatility, fear/greed', query: macroQuery, response: output(macroResponse) },
    { method: 'get', path: '/agents/{id}/performance', summary: "An agent's value held, deposits, withdrawals, basis and PnL over time, and its PnL now", auth: 'read', query: performanceQuery },
    { method: 'get', path: '/portfolio', summary: "One of the account's agent wallets: holdings with numbers as numbers, cost basis and PnL", auth: 'read', query: walletPortfolioQuery, response: output(walletPortfolioResponse) },
  ]
}

/** The account (profile, keys) and its agents (CRUD, start and stop, whitelist, audit, outbox). */
function accountAndAgentOps(agents: ReturnType<typeof agentSchemas>): Op[] {
  const agent = resource('Agent')
  return [
    { method: 'get', path: '/me', summary: 'Profile', auth: 'read' },
    { method: 'post', path: '/me', summary: 'Update the profile', auth: 'admin', body: profileBody },
    { method: 'get', path: '/keys', summary: 'API keys (never their values)', auth: 'admin', query: pagingQuery },
    { method: 'post', path: '/keys', summary: 'Create a key (its value is shown once)', auth: 'admin', body: createKeyBody, status: 201, idempotency: 'honoured' },
    { method: 'delete', path: '/keys/{id}', summary: 'Delete a key (refused at once everywhere)', auth: 'admin' },
    { method: 'get', path: '/agents', summary: 'Own agents, newest first', auth: 'read', query: pagingQuery, response: list('agents', 'Agent', true) },
    { method: 'post', path: '/agents', summary: 'Create an agent (snake_case body; model and skills default)', auth: 'trade', body: agents.create, status: 201, idempotency: 'honoured', response: agent },
    { method: 'get', path: '/agents/{id}', summary: 'One agent', auth: 'read', response: agent },
    { method: 'post', path: '/agents/{id}', summary: 'Update an agent (as PATCH); policy and payout_wallet need admin', auth: 'trade', body: agents.update, response: agent },
    { method: 'patch', path: '/agents/{id}', summary: 'Update an agent; policy and payout_wallet need admin, loosening waits for the hold', auth: 'trade', body: agents.update, response: agent },
    { method: 'delete', path: '/agents/{id}', summary: 'Delete an agent (final)', auth: 'trade', response: agent },
    { method: 'post', path: '/agents/{id}/start', summary: 'Start an agent', auth: 'trade', response: agent },
    { method: 'post', path: '/agents/{id}/stop', summary: 'Stop an agent', auth: 'trade', response: agent },
    { method: 'get', path: '/agents/{id}/whitelist', summary: 'Transfer whitelist', auth: 'read', response: list('whitelist', 'WhitelistEntry', false) },
    { method: 'post', path: '/agents/{id}/whitelist', summary: 'Whitelist an address (after a hold)', auth: 'admin', body: whitelistAddBody, status: 201, idempotency: 'honoured', response: resource('WhitelistEntry') },
    {
      method: 'delete', path: '/agents/{id}/whitelist', summary: 'Remove an address (named in the body, or as ?address=)', auth: 'admin',
      body: whitelistDeleteBody, bodyOptional: true, query: whitelistDeleteQuery, response: resource('WhitelistEntry', { deleted: { const: true } }),
    },
    {
      method: 'post', path: '/agents/{id}/clone', summary: "A new live agent from this one's settings (a paper agent is never switched to live)", auth: 'trade',
      body: cloneAgentBody, bodyOptional: true, status: 201, idempotency: 'honoured', response: agent,
    },
    {
      method: 'post', path: '/agents/{id}/paper/deposit', summary: "A virtual deposit into a paper agent's ledger (422 not_paper_agent for a live one)", auth: 'trade',
      body: paperDepositBody, status: 201, idempotency: 'honoured',
    },
    { method: 'get', path: '/agents/{id}/audit', summary: 'Policy, payout wallet and whitelist changes, newest first', auth: 'read', query: pagingQuery },
    { method: 'get', path: '/agents/{id}/transactions', summary: "The wallet's transaction outbox", auth: 'read', query: txQuery },
  ]
}

/**
 * The OpenAPI 3.1 document, generated from the same zod schemas the routes validate with.
 *
 * @example
 * router.get('/openapi.json', (ctx) => { ctx.body = openApiDocument({ models: ['gpt-4o-mini'], defaultModel: 'gpt-4o-mini' }) })
 */
export function openApiDocument({ models, defaultModel }: { models: readonly string[]; defaultModel: string }) {
  const agents = agentSchemas({ models: new Set(models), defaultModel, skills: SKILL_SLUGS, strategies: STRATEGY_SLUGS })
  const agent = resource('Agent')
  const skills = { type: 'object', required: ['skills', 'strategies'], properties: { skills: { type: 'array', items: ref('Skill') }, strategies: { type: 'array', items: ref('Strategy') } } }
  const prices = { type: 'object', required: ['prices', 'block'], properties: { prices: { type: 'array', items: ref('Price') }, block: { type: 'integer' } } }
  const ops: Op[] = [
    { method: 'get', path: '/health', summary: 'Database, Redis, RPC and venue addresses' },
    { method: 'get', path: '/models', summary: 'Model catalog with credit prices' },
    { method: 'get', path: '/skills', summary: 'Built-in skills and strategy presets', response: skills },
    { method: 'get', path: '/openapi.json', summary: 'This OpenAPI 3.1 document' },
    ...skillOps(),
    { method: 'get', path: '/auth/nonce', summary: 'A single-use SIWE nonce' },
    { method: 'post', path: '/auth/siwe', summary: 'Sign in with Ethereum (session cookie + CSRF token)', body: siweBody },
    { method: 'get', path: '/auth/session', summary: "The cookie's signed-in session with its CSRF token (401 without a live session)", sessionOnly: true, response: sessionResponse },
    { method: 'get', path: '/auth/session/state', summary: "Whether the cookie signs in: `signedIn`, and the session as /auth/session answers it when true (200 either way)", response: sessionStateResponse },
    { method: 'post', path: '/auth/logout', summary: 'End the session' },
    { method: 'get', path: '/quotes', summary: "Quote assets of a venue, popular first", query: quotesQuery },
    { method: 'get', path: '/tokens', summary: 'Token board, newest first', query: boardQuery },
    { method: 'get', path: '/tokens/{address}', summary: 'One token with its curve or pool state' },
    { method: 'get', path: '/tokens/{address}/trades', summary: 'Trades of a token, newest first', query: tradesQuery },
    { method: 'get', path: '/price', summary: 'USD prices from pools (tokens=, or mint= and currency=usd)', query: priceQuery, response: prices },
    { method: 'get', path: '/stock-tokens', summary: 'Tokenized stocks with price and logo' },
    { method: 'get', path: '/stats', summary: 'Ecosystem figures' },
    { method: 'get', path: '/leaderboard', summary: 'Agents ranked by creator fees earned, or realised PnL (sort_by=pnl; mode=paper for paper agents)', query: leaderboardQuery },
    ...intelOps(),
    ...accountAndAgentOps(agents),
    { method: 'post', path: '/launch/preview', summary: 'Simulate a launch; nothing is sent', auth: 'trade', body: previewBody },
    ...(['venue-a', 'venue-b', 'self-funded'] as const).map((v): Op => ({
      method: 'post', path: `/launch/${v}`, summary: `Launch a token (${v}); poll GET /launch/{id} (a paper agent's makes a virtual token and pool, nothing sent)`, auth: 'trade', body: launchBody, idempotency: 'required', status: 202,
    })),
    { method: 'get', path: '/launch/{id}', summary: 'Poll a launch', auth: 'read' },
    { method: 'post', path: '/swap/quote', summary: 'Quote a swap (valid 30 s)', auth: 'trade', body: swapInput },
    { method: 'post', path: '/swap/execute', summary: 'Execute a swap', auth: 'trade', body: swapInput, idempotency: 'honoured' },
    { method: 'get', path: '/swap/{id}', summary: 'Poll a swap', auth: 'read' },
    ...streamOps(),
    { method: 'get', path: '/wallet/portfolio', summary: 'Holdings valued in USD, with cost basis, unrealised and realised PnL', auth: 'read', query: portfolioInput },
    { method: 'post', path: '/wallet/transfer', summary: 'Transfer to a whitelisted address', auth: 'trade', body: transferInput, idempotency: 'honoured' },
    { method: 'get', path: '/fees/earnings', summary: 'Creator fees per launched token', auth: 'read', query: earningsQuery },
    { method: 'post', path: '/fees/claim', summary: 'Claim creator fees to the payout wallet', auth: 'trade', body: claimBody, idempotency: 'honoured' },
    { method: 'get', path: '/fees/stats', summary: 'Platform fee totals', auth: 'read' },
    ...chatOps(),
    { method: 'get', path: '/billing', summary: 'Credits, reserved, spent today and this month (1 credit = 0.001 USD)', auth: 'read' },
    { method: 'get', path: '/billing/transactions', summary: 'The credit ledger, newest first', auth: 'read', query: billingTransactionsQuery },
    { method: 'get', path: '/billing/deposit', summary: "The account's deposit address, assets, rate, confirmations and pending deposits", auth: 'read' },
    { method: 'post', path: '/dev/faucet', summary: 'Fund an agent wallet or the account deposit address (embedded chain only)', auth: 'trade', body: faucetBody },
    ...marketplaceOps(), ...automationOps(), ...backtestOps(), ...webhookOps(), ...approvalOps(), ...policyOps(), ...operatorOps(),
    { method: 'get', path: '/mcp/tools', summary: "The tool server's tools for this key, with JSON Schemas (MCP itself: /api/mcp)", auth: 'read', toolServer: true, response: mcpToolsResponse },
    { method: 'post', path: '/mcp/call', summary: 'Call one tool over plain HTTP; fund-moving tools need arguments.confirm: true', auth: 'read', toolServer: true, body: mcpCallBody, response: mcpCallResponse },
  ]
  const paths: Record<string, Record<string, object>> = {}
  for (const op of ops) {
    const params = [
      ...[...op.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } })),
      ...(op.query ? queryParams(op.query) : []),
      ...(op.idempotency ? [{ name: 'Idempotency-Key', in: 'header', required: op.idempotency === 'required', schema: { type: 'string', minLength: 1, maxLength: 255 } }] : []),
    ]
    ;(paths[op.path] ??= {})[op.method] = {
      summary: op.summary,
      ...(op.sessionOnly ? { security: [{ session: [] }] } : op.auth ? { security: op.toolServer ? [{ apiKey: [] }] : [{ apiKey: [] }, { session: [] }], 'x-scope': op.auth } : { security: [] }),
      ...(params.length ? { parameters: params } : {}),
      ...(op.atRoot ? { servers: [{ url: '/' }] } : op.toolServer ? { servers: [{ url: '/api' }] } : {}),
      ...(op.body ? { requestBody: { required: !op.bodyOptional, content: { 'application/json': { schema: schema(op.body) } } } } : {}),
      responses: {
        [String(op.status ?? 200)]: op.responseType
          ? { description: 'The document', content: { [op.responseType]: {} } }
          : {
              description: 'The resource at the top level, plus meta.requestId',
              content: { 'application/json': op.response ? { schema: withMeta(op.response) } : {} },
            },
        default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Agent Launch and Trading Service', version: '1' },
    servers: [{ url: '/api/v1' }],
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'cpk_ API key' },
        session: { type: 'apiKey', in: 'cookie', name: 'sid', description: 'SIWE session; writes need X-CSRF-Token' },
      },
      schemas: {
        Meta: { type: 'object', required: ['requestId', 'timestamp'], properties: { requestId: { type: 'string' }, timestamp: { type: 'string' } } },
        Agent: output(agentResponse),
        WhitelistEntry: output(whitelistEntryResponse),
        Skill: output(skillResponse),
        Strategy: output(strategyResponse),
        Price: output(priceResponse),
        ChatAnswer: output(chatAnswerResponse),
        ChatMessage: output(chatMessageResponse),
        CustomSkill: output(customSkillResponse),
        RegistrySkill: output(registrySkillResponse),
        ...MARKETPLACE_SCHEMAS, Automation: output(automationResponse),
        Error: {
          type: 'object',
          required: ['error', 'code'],
          properties: { error: { type: 'string' }, code: { type: 'string' }, field_errors: { type: 'object', additionalProperties: { type: 'string' } } },
        },
      },
    },
    paths,
  }
}
