/**
 * An automation as its actor keeps it: a trigger and an action owned by an agent (DESIGN of the
 * service: docs/api.md "Automations"). Plain data: the actor's context is JSON.
 */
export type AutomationTrigger =
  | { type: 'schedule'; scheduledAt: string }
  | { type: 'interval'; everySeconds: number; startAt?: string | undefined; endAt?: string | undefined; maxRuns?: number | undefined }
  | { type: 'price_threshold'; mint: string; operator: 'gte' | 'lte'; priceUsd: string; expiresAt?: string | undefined }
  | { type: 'new_launch'; venue?: string | undefined; quote?: string | undefined; creator?: string | undefined; symbolPattern?: string | undefined }
  /** `trailing_stop`: fires when the price falls `trailPct` % (or `trailUsd`) below the highest price seen since armed. */
  | { type: 'trailing_stop'; mint: string; trailPct?: number | undefined; trailUsd?: string | undefined }
  /** `bracket`: fires its take-profit side at or above `takeProfitUsd`, or its stop-loss side at or below `stopLossUsd`. */
  | { type: 'bracket'; mint: string; takeProfitUsd: string; stopLossUsd: string }
  | { type: 'webhook'; auth?: 'signature' | 'token' | undefined; values?: Record<string, HookValueSpec> | undefined }
  /** `leader_swap` (a `mirror`): fires on each swap of the agent `leaderAgentId` that confirms (see mirrorKind.ts). */
  | { type: 'leader_swap'; leaderAgentId: string }

/** A value a signal webhook's body may carry into the action's arguments (see webhookTrigger.ts). */
export type HookValueSpec = {
  type: 'amount' | 'enum' | 'string'
  arg?: string | undefined
  required?: boolean | undefined
  max?: string | undefined
  values?: string[] | undefined
}

export type AutomationAction =
  | { type: 'tool_call'; tool: string; args: Record<string, unknown> }
  | { type: 'agent_prompt'; prompt: string }

/**
 * Every automation kind, declared once: the request and response schemas, the list filter, the
 * model tools' shorthands and the OpenAPI document derive theirs from it. `custom` is a trigger
 * and an action as written; every other kind is a shorthand with its parameters under its name.
 */
export const AUTOMATION_KINDS = ['dca', 'limit', 'sniper', 'stop_loss', 'take_profit', 'trailing_stop', 'bracket', 'twap', 'mirror', 'custom'] as const
export type AutomationKind = (typeof AUTOMATION_KINDS)[number]

/** Every trigger type, declared once (the response schema's enum); the union above must name exactly these. */
export const TRIGGER_TYPES = ['schedule', 'interval', 'price_threshold', 'new_launch', 'trailing_stop', 'bracket', 'webhook', 'leader_swap'] as const
type SameSet<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never
const triggerTypesAreTheUnions: SameSet<(typeof TRIGGER_TYPES)[number], AutomationTrigger['type']> = true
void triggerTypesAreTheUnions

/** The side of a bracket that a price firing serves. */
export type BracketSide = 'take_profit' | 'stop_loss'

/** What fires an automation besides its own timer: a manual trigger, a price crossing, a launch. */
export type FiringSource =
  | { source: 'timer' }
  | { source: 'manual' }
  | { source: 'price'; block: string; priceUsd: string; side?: BracketSide | undefined }
  | { source: 'launch'; token: { address: string; symbol: string; venue: string; quote: string; creator: string } }
  /** A signal webhook's message (its sender's id), with the action arguments its body set. */
  | { source: 'webhook'; messageId: string; values: Record<string, string> }
  /** A leader's swap that confirmed (a mirror's firing): written into the follower's inbox with the confirmation itself. */
  | { source: 'leader_swap'; swap: LeaderSwap }

/** A leader's confirmed swap as a mirror hears it: token addresses, `amountIn` in tokenIn's base units, its USD value when sent. */
export type LeaderSwap = {
  id: string
  tokenIn: string
  tokenOut: string
  symbolIn: string
  symbolOut: string
  decimalsIn: number
  amountIn: string
  valueInUsd: string
  txHash: string | null
  confirmedAt: string
}

/** One firing as the API shows it. */
export type FiringRecord = {
  number: number
  at: string
  source: FiringSource['source']
  /** A timer firing that served ticks missed while the service or the agent was down (one for all of them). */
  catchUp: boolean
  outcome: 'ok' | 'failed' | 'skipped'
  txHash: string | null
  reason: string | null
  /** The operation (a swap) or run the firing started, if any. */
  childId: string | null
  /** A bracket's firing: the side it served (the other was cancelled as it started). */
  side?: BracketSide | undefined
  /** A TWAP's firing: the slice it served (1-based). */
  slice?: number | undefined
  /** A mirror's firing: the leader's swap it copied (or refused to). */
  leaderSwapId?: string | undefined
}

/**
 * What the protective and sliced kinds add to an automation (absent on the others): a firing of
 * `share` sells that share of the agent's holding of the swap's tokenIn, read when it fires; a
 * TWAP's firings are its slices, each `amountIn` / `slices` (the last one the rest, so the total
 * is never exceeded), a slice whose quoted price impact is over `maxPriceImpactBps` skipped.
 */
export type OrderParams = {
  share?: number | undefined
  /** The token's USD price at creation: a trailing stop's first high. */
  armedPriceUsd?: string | undefined
  /** `decimals`: tokenIn's, read at creation (absent: the firing reads them from a quote). */
  twap?: { amountIn: string; slices: number; maxPriceImpactBps: number; decimals?: number | undefined } | undefined
  /** A mirror's: each leader swap copied at `ratio`, refused over `maxPerTradeUsd` (after the ratio), outside `tokens` or seen more than `maxDelaySeconds` after it confirmed. */
  mirror?: MirrorParams | undefined
}

export type MirrorParams = { ratio: number; maxPerTradeUsd: string; tokens?: string[] | undefined; maxDelaySeconds: number }

/** What an automation is created with (the request expanded and validated). */
export type AutomationInput = {
  automationId: string
  accountId: string
  agentId: string
  name: string
  description: string | null
  kind: AutomationKind
  trigger: AutomationTrigger
  action: AutomationAction
  triggerOnce: boolean
  catchUp: 'once' | 'skip'
  maxFirings: number | null
  maxSpendUsd: string | null
  /** Failed firings in a row after which the automation goes `error`. */
  maxFailures: number
  createdAt: string
  /** The protective and sliced kinds' parameters (stop_loss, take_profit, trailing_stop, bracket, twap). */
  order?: OrderParams | undefined
}

/** An automation's parameters a PATCH may change (effective from the next firing). */
export type AutomationChanges = Partial<Pick<AutomationInput, 'name' | 'description' | 'trigger' | 'action' | 'catchUp' | 'maxFirings' | 'maxSpendUsd' | 'triggerOnce'>>
