import { z } from 'zod'
import { AUTOMATION_KINDS, type AutomationKind } from './automation.types.ts'
import { limitQuery } from '../paging.schema.ts'
import { slippageBps, tokenAmount, tokenRef } from '../swaps/swap.schema.ts'

const usd = z
  .string('A USD amount as a decimal string, such as "250".')
  .regex(/^\d{1,15}(\.\d{1,18})?$/, 'A USD amount as a decimal string, such as "250".')
  .refine((v) => /[1-9]/.test(v), 'Must be greater than 0.')
const time = z.iso.datetime({ offset: true, message: 'An ISO 8601 time, such as 2026-12-01T09:00:00Z.' })
const seconds = z.number('A whole number of seconds.').int('A whole number of seconds.').min(1, 'At least 1 second.').max(31_536_000, 'At most a year.')
const venue = z.enum(['venue-a', 'venue-b', 'self-funded'], 'One of venue-a, venue-b, self-funded.')
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'A 0x address.').transform((a) => a.toLowerCase())
const symbolPattern = z.string().min(1).max(32).regex(/^[A-Za-z0-9*?$._-]+$/, 'Letters, digits and the wildcards * and ?.')

/** A value a signal webhook's body may carry into the action's arguments (see webhookTrigger.ts). */
const hookValue = z.strictObject({
  type: z.enum(['amount', 'enum', 'string'], 'One of amount, enum, string.'),
  /** The action's argument it sets (default: the body field's own name), e.g. `amountIn` for a body's `amount`. */
  arg: z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'An argument name of the action.').optional(),
  required: z.boolean('true or false.').optional(),
  /** An amount's largest accepted value. */
  max: tokenAmount.optional(),
  /** An enum's accepted values. */
  values: z.array(z.string().min(1).max(64)).min(1).max(50).optional(),
})
const hookValues = z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'A field name: letters, digits, _.'), hookValue)
  .refine((v) => Object.keys(v).length <= 20, 'At most 20 values.')

export const triggerSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('schedule'), scheduledAt: time }),
    z.strictObject({ type: z.literal('interval'), everySeconds: seconds, startAt: time.optional(), endAt: time.optional(), maxRuns: z.number().int().min(1).max(1_000_000).optional() }),
    z.strictObject({ type: z.literal('price_threshold'), mint: tokenRef, operator: z.enum(['gte', 'lte'], 'gte or lte.'), priceUsd: usd, expiresAt: time.optional() }),
    z.strictObject({ type: z.literal('new_launch'), venue: venue.optional(), quote: z.enum(['ETH', 'USDC'], 'ETH or USDC.').optional(), creator: address.optional(), symbolPattern: symbolPattern.optional() }),
    // A signal webhook in (POST /hooks/automations/:id/:token): signed (Standard Webhooks) unless `auth` is `token`.
    z.strictObject({ type: z.literal('webhook'), auth: z.enum(['signature', 'token'], 'signature or token.').optional(), values: hookValues.optional() }),
  ],
  'One of schedule, interval, price_threshold, new_launch, webhook.',
)

export const actionSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('tool_call'), tool: z.string().min(1).max(64), args: z.record(z.string(), z.unknown()).default({}) }),
    z.strictObject({ type: z.literal('agent_prompt'), prompt: z.string().trim().min(1, 'Must not be empty.').max(4000, 'At most 4000 characters.') }),
  ],
  'One of tool_call, agent_prompt.',
)

/** `kind: "dca"`: buy `amountPerRun` of tokenIn into tokenOut every `everySeconds`. */
export const dcaSchema = z.strictObject({ tokenIn: tokenRef, tokenOut: tokenRef, amountPerRun: tokenAmount, everySeconds: seconds, maxRuns: z.number().int().min(1).max(1_000_000).optional(), slippageBps: slippageBps.optional() })
/** `kind: "limit"`: swap once when `mint` (default: tokenOut for lte, tokenIn for gte) crosses `priceUsd`. */
export const limitSchema = z.strictObject({
  tokenIn: tokenRef, tokenOut: tokenRef, amountIn: tokenAmount, priceUsd: usd, operator: z.enum(['gte', 'lte'], 'gte or lte.'),
  mint: tokenRef.optional(), slippageBps: slippageBps.optional(), expiresAt: time.optional(),
  /** Needed to trade a token the service has not verified (a launched token, named by address). */
  acknowledgeUnverified: z.boolean('true or false.').optional(),
})
/** `kind: "sniper"`: buy each new launch that matches with `amountIn` of `quote`, up to `maxBuys`. */
export const sniperSchema = z.strictObject({
  quote: z.enum(['ETH', 'USDC'], 'ETH or USDC.'), amountIn: tokenAmount, maxBuys: z.number().int().min(1).max(1000),
  venue: venue.optional(), creator: address.optional(), symbolPattern: symbolPattern.optional(), slippageBps: slippageBps.optional(),
})

const share = z.number('A share of the holding, more than 0 and at most 1.').gt(0, 'More than 0.').max(1, 'At most 1 (the whole holding).')
const ackUnverified = z.boolean('true or false.').optional()
/** What every protective order sells: `share` (default 1) of the holding of `token`, into `quoteOut` (default USDC). */
const sale = { token: tokenRef, share: share.optional(), quoteOut: tokenRef.optional(), slippageBps: slippageBps.optional(), acknowledgeUnverified: ackUnverified }
/** `kind: "stop_loss"` / `"take_profit"`: sell once when the token's USD price is at or below (at or above) `priceUsd`. */
export const protectiveSchema = z.strictObject({ ...sale, priceUsd: usd })
/** `kind: "trailing_stop"`: sell once when the price falls `trailPct` % (or `trailUsd` USD) from the highest price since armed. */
export const trailingStopSchema = z.strictObject({
  ...sale,
  trailPct: z.number('A percentage, more than 0 and under 100.').gt(0, 'More than 0.').lt(100, 'Under 100.').optional(),
  trailUsd: usd.optional(),
})
/** `kind: "bracket"`: a take-profit and a stop-loss on one holding; the first to fire cancels the other. */
export const bracketSchema = z.strictObject({ ...sale, takeProfitUsd: usd, stopLossUsd: usd })
/** `kind: "twap"`: swap `amountIn` in all of tokenIn into tokenOut in `slices` slices at even intervals over `overSeconds`. */
export const twapSchema = z.strictObject({
  tokenIn: tokenRef, tokenOut: tokenRef, amountIn: tokenAmount,
  slices: z.number('A whole number of slices, 2-1000.').int('A whole number of slices, 2-1000.').min(2, 'At least 2.').max(1000, 'At most 1000.'),
  overSeconds: seconds,
  maxPriceImpactBps: z.number('An integer number of basis points, 1-10000.').int('An integer number of basis points, 1-10000.').min(1, 'At least 1 bps.').max(10_000, 'At most 10000 bps.'),
  slippageBps: slippageBps.optional(), acknowledgeUnverified: ackUnverified,
})
/**
 * `kind: "mirror"`: repeat each confirmed swap of the agent `leaderAgentId` (the account's own, or
 * a public agent whose owner allows copying) at `ratio` of its amount; a copy over
 * `maxPerTradeUsd`, of a token outside `tokens`, or seen more than `maxDelaySeconds` after the
 * leader's swap confirmed is refused and reported.
 */
export const mirrorSchema = z.strictObject({
  leaderAgentId: z.uuid('Must be an agent id.'),
  ratio: z.number('A ratio of the leader\'s amount, more than 0 and at most 10.').gt(0, 'More than 0.').max(10, 'At most 10.'),
  maxPerTradeUsd: usd,
  tokens: z.array(tokenRef).min(1, 'At least one token, or leave it out (any token).').max(50, 'At most 50 tokens.').optional(),
  maxDelaySeconds: z.number('A whole number of seconds, 1-86400.').int('A whole number of seconds, 1-86400.').min(1, 'At least 1 second.').max(86_400, 'At most a day.'),
  slippageBps: slippageBps.optional(),
})
/** The kinds that are shorthands, with parameters under their own name. */
export const SHORTHAND_KINDS = AUTOMATION_KINDS.filter((k): k is Exclude<AutomationKind, 'custom'> => k !== 'custom') as [Exclude<AutomationKind, 'custom'>, ...Exclude<AutomationKind, 'custom'>[]]
const kindsText = `One of ${SHORTHAND_KINDS.join(', ')}.`

/** `POST /automations`: the reference client's body (snake_case top level), or a kind with its parameters. */
export const createAutomationSchema = z.strictObject({
  agent_id: z.uuid('Must be an agent id.').optional(),
  agentId: z.uuid('Must be an agent id.').optional(),
  name: z.string('A name.').trim().min(1, 'Must not be empty.').max(100, 'At most 100 characters.'),
  description: z.string().max(1000, 'At most 1000 characters.').optional(),
  kind: z.enum(SHORTHAND_KINDS, kindsText).optional(),
  trigger: triggerSchema.optional(),
  action: actionSchema.optional(),
  trigger_once: z.boolean('true or false.').optional(),
  dca: dcaSchema.optional(),
  limit: limitSchema.optional(),
  sniper: sniperSchema.optional(),
  stop_loss: protectiveSchema.optional(),
  take_profit: protectiveSchema.optional(),
  trailing_stop: trailingStopSchema.optional(),
  bracket: bracketSchema.optional(),
  twap: twapSchema.optional(),
  mirror: mirrorSchema.optional(),
  catch_up: z.enum(['once', 'skip'], 'once or skip.').optional(),
  max_firings: z.number().int().min(1, 'At least 1.').max(1_000_000).optional(),
  max_spend_usd: usd.optional(),
})
export type CreateAutomationBody = z.infer<typeof createAutomationSchema>

/** `PATCH /automations/:id`: status (pause, resume), name, description and parameters; effective from the next firing. */
export const updateAutomationSchema = z.strictObject({
  status: z.enum(['paused', 'armed'], 'paused (pause) or armed (resume).').optional(),
  name: z.string().trim().min(1, 'Must not be empty.').max(100).optional(),
  description: z.string().max(1000).nullable().optional(),
  trigger: triggerSchema.optional(),
  action: actionSchema.optional(),
  trigger_once: z.boolean().optional(),
  catch_up: z.enum(['once', 'skip']).optional(),
  max_firings: z.number().int().min(1).max(1_000_000).nullable().optional(),
  max_spend_usd: usd.nullable().optional(),
})
export type UpdateAutomationBody = z.infer<typeof updateAutomationSchema>

/** `GET /automations?agent_id=&status=&kind=&limit=&cursor=`. */
export const listAutomationsSchema = z.strictObject({
  agent_id: z.uuid('Must be an agent id.').optional(),
  agentId: z.uuid('Must be an agent id.').optional(),
  status: z.enum(['armed', 'executing', 'paused', 'completed', 'cancelled', 'error'], 'One of armed, executing, paused, completed, cancelled, error.').optional(),
  kind: z.enum(AUTOMATION_KINDS, `One of ${AUTOMATION_KINDS.join(', ')}.`).optional(),
  limit: limitQuery,
  cursor: z.string().max(200).optional(),
})
export type ListAutomationsQuery = z.infer<typeof listAutomationsSchema>

/** Seconds the previous hook URL and secret keep working after `POST /automations/:id/hook/rotate`, by default (1 hour). */
export const HOOK_ROTATION_GRACE_SECONDS = 3600

/** `POST /automations/:id/hook/rotate`: how long the previous URL and secret keep working (0: not at all; at most 24 hours). */
export const rotateHookSchema = z.strictObject({
  graceSeconds: z.number().int('Whole seconds.').min(0, 'From 0 to 86400.').max(86400, 'From 0 to 86400.').default(HOOK_ROTATION_GRACE_SECONDS),
})
