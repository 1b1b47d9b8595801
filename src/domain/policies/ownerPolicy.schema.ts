import { z } from 'zod'

/**
 * An owner's policy: an ordered list of rules over every money move of an agent, written once
 * for the whole account (`/policies/account`) or for one agent (`/agents/:id/policy`). A rule
 * matches when all its criteria match (a rule without criteria matches every operation); the
 * evaluation is in ownerPolicyRules.ts. camelCase, as the issue and the API write it.
 */

/** At most this many rules in one policy (docs/api.md, "Policies"): the evaluation stays under 50 µs. */
export const MAX_POLICY_RULES = 100
/** At most this many criteria in one rule. */
export const MAX_RULE_CRITERIA = 16
/** At most this many entries in one list of a criterion (tokens, addresses). */
export const MAX_CRITERION_LIST = 100
/** The longest rolling window of a `net_usd_window` criterion: 30 days. */
export const MAX_WINDOW_SECONDS = 30 * 24 * 3600

export const POLICY_OPERATIONS = ['swap', 'transfer', 'launch', 'fee_claim', 'mirror_copy'] as const
export const POLICY_INITIATORS = ['api_key', 'run', 'chat', 'automation', 'mirror'] as const
export const POLICY_ACTIONS = ['reject', 'require_approval', 'accept'] as const

export type PolicyOperationKind = (typeof POLICY_OPERATIONS)[number]
export type PolicyInitiator = (typeof POLICY_INITIATORS)[number]
export type PolicyAction = (typeof POLICY_ACTIONS)[number]

const usd = z.string().regex(/^\d{1,12}(\.\d{1,2})?$/, 'A USD amount as a decimal string, such as "1000" or "99.50".')
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'A 0x address of 40 hex digits.')
/** A symbol (letters and digits, not a cut-short hex address) or a full 0x address. */
const tokenRef = z
  .string()
  .regex(/^(0x[0-9a-fA-F]{40}|(?!0[xX][0-9a-fA-F]*$)[A-Za-z0-9]{1,11})$/, 'A token symbol or a 0x address of 40 hex digits.')
const operator = z.enum(['gt', 'gte', 'lt', 'lte'])
const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'A UTC time as "HH:MM" (00:00 to 23:59).')
const uniqueList = <T extends z.ZodType<string>>(item: T, min = 1) =>
  z
    .array(item)
    .min(min)
    .max(MAX_CRITERION_LIST)
    .refine((l) => new Set(l.map((e) => e.toLowerCase())).size === l.length, 'Entries must not repeat.')

export const policyCriterionSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('operation'), operations: uniqueList(z.enum(POLICY_OPERATIONS)) }),
    z.strictObject({ type: z.literal('initiator'), initiators: uniqueList(z.enum(POLICY_INITIATORS)) }),
    z.strictObject({ type: z.literal('token'), tokens: uniqueList(tokenRef), side: z.enum(['in', 'out', 'any']).default('any') }),
    z.strictObject({ type: z.literal('destination'), addresses: uniqueList(address) }),
    z.strictObject({ type: z.literal('usd_value'), operator, usd }),
    z.strictObject({
      type: z.literal('net_usd_window'),
      scope: z.enum(['agent', 'account']),
      windowSeconds: z.number().int().min(60).max(MAX_WINDOW_SECONDS),
      operator,
      usd,
    }),
    z.strictObject({ type: z.literal('price_impact'), operator, bps: z.number().int().min(0).max(10_000) }),
    z.strictObject({ type: z.literal('time_of_day'), fromUtc: hhmm, toUtc: hhmm }),
  ],
  { error: (issue) => (issue.code === 'invalid_union' ? 'Unknown criterion type: one of operation, initiator, token, destination, usd_value, net_usd_window, price_impact, time_of_day.' : undefined) },
)
export type PolicyCriterion = z.infer<typeof policyCriterionSchema>

export const policyRuleSchema = z.strictObject({
  name: z.string().trim().min(1).max(64),
  action: z.enum(POLICY_ACTIONS),
  criteria: z.array(policyCriterionSchema).max(MAX_RULE_CRITERIA),
})
export type PolicyRule = z.infer<typeof policyRuleSchema>

const minuteOf = (hhmmValue: string) => Number(hhmmValue.slice(0, 2)) * 60 + Number(hhmmValue.slice(3, 5))

/**
 * The minutes of the day a `time_of_day` range covers: `[fromUtc, toUtc)`, wrapping past
 * midnight when `toUtc` is earlier than `fromUtc` (22:00 to 06:00 is the night). Equal ends
 * cover nothing.
 */
export function minutesOfRange(fromUtc: string, toUtc: string): Uint8Array {
  const out = new Uint8Array(1440)
  const from = minuteOf(fromUtc)
  const to = minuteOf(toUtc)
  for (let m = from; m !== to; m = (m + 1) % 1440) out[m] = 1
  return out
}

/**
 * A rule that can never match: a `time_of_day` range that covers nothing, or ranges of one rule
 * (all of which must match) that share no minute. Answered as a field error on the criterion.
 */
function checkTimeRanges(rule: PolicyRule, ruleIndex: number, ctx: z.RefinementCtx) {
  let common: Uint8Array | undefined
  rule.criteria.forEach((c, j) => {
    if (c.type !== 'time_of_day') return
    const mins = minutesOfRange(c.fromUtc, c.toUtc)
    if (!mins.includes(1)) {
      ctx.addIssue({ code: 'custom', path: ['rules', ruleIndex, 'criteria', j, 'toUtc'], message: 'fromUtc and toUtc are equal: the range covers no time, so the rule can never match.' })
      return
    }
    common = common ? common.map((v, m) => v & mins[m]!) : mins
    if (!common.includes(1)) {
      ctx.addIssue({ code: 'custom', path: ['rules', ruleIndex, 'criteria', j], message: "This range shares no minute with the rule's other time_of_day ranges, so the rule can never match." })
    }
  })
}

export const ownerPolicySchema = z
  .strictObject({
    rules: z.array(policyRuleSchema).max(MAX_POLICY_RULES, `At most ${MAX_POLICY_RULES} rules.`),
  })
  .superRefine((policy, ctx) => {
    const seen = new Set<string>()
    policy.rules.forEach((rule, i) => {
      if (seen.has(rule.name)) ctx.addIssue({ code: 'custom', path: ['rules', i, 'name'], message: 'Rule names must be unique within a policy.' })
      seen.add(rule.name)
      checkTimeRanges(rule, i, ctx)
    })
  })
export type OwnerPolicy = z.infer<typeof ownerPolicySchema>

/** No rule: every operation falls back to the agent's guardrails. */
export const EMPTY_OWNER_POLICY: OwnerPolicy = { rules: [] }
