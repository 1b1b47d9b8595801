import { z } from 'zod'
import { AUTOMATION_KINDS, TRIGGER_TYPES } from '../domain/automations/automation.types.ts'

/**
 * What the OpenAPI document promises for the resources whose field names the reference client
 * depends on (agents, whitelist entries, skills, prices). Documentation only: responses are
 * shaped by their view functions (`agentView` in `domain/agents/agentView.ts`), and a test compares the two.
 */
const nullableString = z.string().nullable()
const isoTime = z.string().describe('ISO 8601, UTC')
const address = z.string().describe('0x address, lower case')

export const policyResponse = z.object({
  maxTradeUsd: z.string(),
  maxDailyUsd: z.string(),
  maxPriceImpactBps: z.number().int(),
  allowTokens: z.array(z.string()),
  denyTokens: z.array(z.string()),
  paused: z.boolean(),
  requireApprovalAboveUsd: z.string().nullable().describe('money moves above this USD value wait for approval; null: none'),
  approvalTtlSeconds: z.number().int().describe('seconds a move waits for a decision before it is rejected as expired'),
})

export const agentResponse = z.object({
  id: z.uuid(),
  name: z.string(),
  model: z.string(),
  skills: z.array(z.string()),
  systemPrompt: nullableString,
  payoutWallet: address.nullable(),
  persona: nullableString,
  strategy: nullableString,
  temperature: z.number().nullable(),
  isPublic: z.boolean(),
  allowCopy: z.boolean().describe("other accounts' mirrors may copy this agent's swaps while it is public (PATCH allow_copy)"),
  publicDescription: nullableString,
  runIntervalSeconds: z.number().int().describe('seconds between the runs a running agent starts on its own; 0 = never'),
  mode: z.enum(['live', 'paper']).describe('fixed at creation; a paper agent is filled against the real pools into a virtual ledger, nothing sent'),
  policy: policyResponse,
  walletAddress: address,
  status: z.enum(['stopped', 'running', 'paused', 'deleted']),
  statusReason: nullableString,
  createdAt: isoTime,
  updatedAt: isoTime,
  /** Loosening changes waiting for their hold, soonest first (keys as in `policy`, plus `payoutWallet`). */
  pendingChanges: z.array(z.object({ changes: z.record(z.string(), z.unknown()), effectiveAt: isoTime })),
})

export const whitelistEntryResponse = z.object({
  address,
  label: nullableString,
  usableAt: isoTime,
  usable: z.boolean(),
  createdAt: isoTime,
})

export const skillResponse = z.object({
  slug: z.string(),
  name: z.string(),
  description: z.string(),
  alwaysOn: z.boolean(),
  tools: z.array(z.string()),
})

export const strategyResponse = z.object({
  slug: z.string(),
  name: z.string(),
  description: z.string(),
  skills: z.array(z.string()),
  goal: z.string().describe('the goal of the runs an agent on this preset starts on its own'),
  runIntervalSeconds: z.number().int().describe('the default run_interval_seconds of an agent created with this preset'),
  suggestedPolicy: policyResponse.pick({ maxTradeUsd: true, maxDailyUsd: true, maxPriceImpactBps: true }),
})

export const customSkillResponse = z.object({
  id: z.uuid(),
  slug: z.string(),
  ref: z.string().describe('author/slug: how any account\'s agent names it once it is public'),
  author: z.uuid().describe('the owning account'),
  name: z.string(),
  description: z.string(),
  instructions: z.string(),
  tools: z.array(z.string()),
  parameters: z.record(z.string(), z.unknown()).nullable().describe('a JSON Schema object'),
  tags: z.array(z.string()),
  isPublic: z.boolean(),
  version: z.string(),
  createdAt: isoTime,
  updatedAt: isoTime,
})

export const registrySkillResponse = z.object({
  slug: z.string(),
  name: z.string(),
  description: z.string(),
  author: z.uuid().describe('the publishing account; agents name the skill author/slug'),
  ref: z.string(),
  tags: z.array(z.string()),
  version: z.string(),
  installs: z.number().int().describe('agents (not deleted) that list the skill'),
})

export const priceResponse = z.object({
  token: z.string().describe('as sent'),
  mint: address.describe('the token address (WETH for ETH)'),
  symbol: z.string(),
  name: z.string(),
  address,
  kind: z.enum(['quote', 'stock', 'launched']),
  price: z.number().nullable().describe('USD, as a JSON number; priceUsd is exact'),
  priceUsd: nullableString,
  currency: z.literal('usd'),
  change24h: z.number().nullable().describe('percent change of the price in its quote asset over 24 h'),
  volume24h: z.number().nullable(),
  volume24hUsd: nullableString,
  marketCap: z.number().nullable(),
  marketCapUsd: nullableString,
  source: address.nullable(),
  sourceType: z.enum(['pool', 'curve', 'peg']),
  block: z.number().int(),
  venue: z.string().optional(),
  quote: z.string().optional(),
  phase: z.enum(['curve', 'pool']).optional(),
})

const usageResponse = z.object({ promptTokens: z.number().int(), completionTokens: z.number().int(), totalTokens: z.number().int() })

/** A chat turn's answer (DESIGN §9), as `POST /agents/:id/chat` and `GET /agents/:id/chat/:turnId` send it. */
export const chatAnswerResponse = z.object({
  id: z.uuid().describe('the turn id'),
  role: z.literal('assistant'),
  status: z.enum(['completed']),
  content: z.string(),
  model: z.string(),
  toolCalls: z.array(z.object({
    id: z.string(),
    name: z.string(),
    arguments: z.unknown().describe('the arguments the model sent, parsed when they are JSON'),
    status: z.enum(['ok', 'refused', 'skipped', 'pending', 'failed']).describe('failed: the operation the call started (a swap, a transfer) failed on chain'),
    result: z.unknown().describe("the tool's result, or its refusal { error, code }"),
  })),
  usage: usageResponse,
  credits: z.number().int(),
  cost: z.number().describe('USD'),
})

export const chatMessageResponse = z.object({
  id: z.uuid(),
  role: z.enum(['user', 'assistant', 'system', 'tool']),
  content: z.string(),
  model: nullableString,
  toolCalls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })).optional(),
  createdAt: isoTime,
})

const runToolCallResponse = z.object({
  id: z.string(),
  name: z.string(),
  arguments: z.unknown().describe('the arguments the model sent, parsed when they are JSON'),
  status: z.enum(['ok', 'refused', 'skipped', 'pending', 'failed']).describe('failed: the operation the call started (a swap, a transfer) failed on chain'),
  result: z.unknown().describe("the tool's result, or its refusal { error, code }"),
  txHash: z.string().nullable().describe('the transaction a fund-moving tool sent'),
  doneAt: isoTime.nullable().describe('when it ended (null while pending or when skipped)'),
})

export const runResponse = z.object({
  id: z.uuid(),
  agentId: z.uuid(),
  status: z.enum(['queued', 'running', 'completed', 'stopped', 'failed', 'budget_exhausted']),
  goal: z.string(),
  model: z.string(),
  trigger: z.enum(['api', 'schedule', 'automation']),
  budgets: z.object({ maxSteps: z.number().int(), maxCredits: z.number().int(), maxSeconds: z.number().int() }),
  used: z.object({ steps: z.number().int(), credits: z.number().int(), seconds: z.number().int() }),
  exhaustedBudget: z.enum(['maxSteps', 'maxCredits', 'maxSeconds']).nullable(),
  steps: z.array(z.object({
    step: z.number().int(),
    startedAt: isoTime.nullable().describe("when the step's model call was asked for: the run's start, or the previous step's end"),
    modelCall: z.object({
      status: z.enum(['pending', 'done']),
      content: z.string().nullable(),
      model: z.string().nullable(),
      usage: usageResponse.nullable(),
      credits: z.number().int(),
      acted: z.boolean().describe('false when its tool calls were not run (the run was stopped)'),
      answeredAt: isoTime.nullable().describe("when the model's answer arrived"),
    }),
    toolCalls: z.array(runToolCallResponse),
  })),
  credits: z.number().int(),
  summary: z.string().nullable().describe("the model's last message, once the run ended"),
  stoppedInFlight: z.object({ modelCall: z.boolean(), toolCalls: z.array(z.string()) }).nullable().describe('what a stop found still in flight'),
  error: z.object({ code: z.string(), message: z.string(), status: z.number().int() }).nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  endedAt: z.string().nullable(),
})

const usdOrNull = z.string().nullable().describe('USD, decimal string; null when it cannot be read now')

/** A market listing with the agent's public card (no key, whitelist, policy, payout wallet, prompt or chat). */
export const listingResponse = z.object({
  id: z.uuid(),
  agentId: z.uuid(),
  status: z.enum(['active', 'sold', 'cancelled']),
  priceCredits: z.number().int(),
  description: nullableString,
  seller: z.object({ name: z.string() }),
  agent: z.object({
    id: z.uuid(),
    name: z.string(),
    strategy: nullableString,
    skills: z.array(z.string()),
    model: z.string(),
    walletAddress: address,
    portfolioValueUsd: usdOrNull,
    creatorFeesEarnedUsd: usdOrNull,
    launches: z.number().int().describe('live launches'),
    pnl: z.object({
      costBasisUsd: usdOrNull.describe("the holdings' cost basis by average cost (GET /wallet/portfolio costBasisUsd)"),
      unrealisedUsd: usdOrNull.describe("holdings' value less their cost basis (GET /wallet/portfolio unrealisedPnlUsd)"),
      realisedUsd: usdOrNull.describe('realised PnL, tokens no longer held included, net of gas (GET /wallet/portfolio realisedPnlUsd)'),
      note: z.string(),
    }),
    createdAt: isoTime,
  }),
  createdAt: isoTime,
  endedAt: isoTime.nullable(),
})

/** A listing in its seller's or buyer's history. */
export const ownListingResponse = listingResponse.extend({
  role: z.enum(['seller', 'buyer']),
  saleCredits: z.number().int().nullable(),
  feeCredits: z.number().int().nullable().describe('the platform fee: 5 % of the sale, rounded down'),
})

export const bidResponse = z.object({
  id: z.uuid(),
  listingId: z.uuid(),
  credits: z.number().int(),
  status: z.enum(['active', 'accepted', 'rejected', 'withdrawn', 'expired']),
  createdAt: isoTime,
  endedAt: isoTime.nullable(),
})

/** An automation: its trigger and action, budgets, status, counters and last firings (newest first). */
const bracketSideResponse = z.object({ level: z.string(), status: z.enum(['waiting', 'firing', 'filled', 'cancelled']) })
export const automationResponse = z.object({
  id: z.uuid(),
  agentId: z.uuid(),
  name: z.string(),
  description: nullableString,
  kind: z.enum(AUTOMATION_KINDS),
  trigger: z.object({ type: z.enum(TRIGGER_TYPES) }).catchall(z.unknown()),
  action: z.object({ type: z.enum(['tool_call', 'agent_prompt']) }).catchall(z.unknown()),
  status: z.enum(['armed', 'executing', 'paused', 'completed', 'cancelled', 'error']),
  triggerType: z.enum(TRIGGER_TYPES),
  actionType: z.enum(['tool_call', 'agent_prompt']),
  triggerOnce: z.boolean(),
  catchUp: z.enum(['once', 'skip']),
  maxFirings: z.number().int().nullable(),
  maxSpendUsd: nullableString.describe('USD, decimal string'),
  runCount: z.number().int().describe('firings that ran their action (ok or failed)'),
  lastTriggeredAt: isoTime.nullable(),
  nextRunAt: isoTime.nullable().describe('the next timer firing; null unless armed and not suspended'),
  suspended: z.boolean().describe('a firing came due while the agent was not running: waits for it to start'),
  lastError: nullableString,
  completedReason: z.enum(['max_firings_reached', 'scheduled_firing_done', 'fired_once', 'expired', 'max_spend_reached']).nullable(),
  firings: z.array(z.object({
    number: z.number().int(),
    at: isoTime,
    source: z.enum(['timer', 'manual', 'price', 'launch', 'webhook', 'leader_swap']),
    outcome: z.enum(['ok', 'failed', 'skipped']),
    txHash: nullableString,
    reason: nullableString,
    childId: nullableString.describe('the swap (wallet operation) or run the firing started'),
    side: z.enum(['take_profit', 'stop_loss']).optional().describe("a bracket's firing: the side it served"),
    slice: z.number().int().optional().describe("a TWAP's firing: its slice, from 1"),
    leaderSwapId: z.string().optional().describe("a mirror's firing: the leader's swap it copied or refused"),
  })).describe('the last 20, newest first'),
  createdAt: isoTime,
  updatedAt: isoTime,
  // What a protective or sliced order waits for (absent for the other kinds).
  share: z.number().optional().describe('the share of the holding a protective order sells'),
  level: z.string().nullable().optional().describe('USD: the price it fires at (a stop-loss, take-profit, trailing stop)'),
  high: z.string().nullable().optional().describe("USD: a trailing stop's highest price since armed"),
  trailPct: z.number().optional(),
  trailUsd: z.string().optional(),
  takeProfit: bracketSideResponse.optional(),
  stopLoss: bracketSideResponse.optional(),
  slices: z.number().int().optional(),
  slicesDone: z.number().int().optional().describe('TWAP slices done (a skipped one included)'),
  slicesLeft: z.number().int().optional(),
  amountIn: z.string().optional().describe("a TWAP's total"),
  maxPriceImpactBps: z.number().int().optional(),
  // A mirror's parameters and the latest leader swap it heard.
  leaderAgentId: z.string().nullable().optional(),
  ratio: z.number().optional(),
  maxPerTradeUsd: z.string().optional(),
  tokens: z.array(z.string()).optional().describe("a mirror's allow list, as addresses and symbols"),
  maxDelaySeconds: z.number().int().optional(),
  lastLeaderSwap: z.object({
    id: z.string(), tokenIn: z.string(), tokenOut: z.string(), symbolIn: z.string(), symbolOut: z.string(), decimalsIn: z.number().int(),
    amountIn: z.string().describe("base units of tokenIn"), valueInUsd: z.string(), txHash: nullableString, confirmedAt: isoTime,
  }).nullable().optional().describe("a mirror's latest leader swap (the one its latest firing served)"),
})
