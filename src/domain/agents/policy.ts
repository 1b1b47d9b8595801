import { z } from 'zod'

const usd = z
  .union([z.string(), z.number()])
  .transform((v) => String(v))
  .pipe(z.string().regex(/^\d{1,12}(\.\d{1,2})?$/, 'A USD amount such as "1000" or "99.50".'))

const tokenRef = z.string().regex(/^(0x[0-9a-fA-F]{40}|[A-Za-z0-9]{1,11})$/, 'A token symbol or 0x address.')

/** An agent's spending policy, checked before any money moves. snake_case, as agent bodies are. */
export const policySchema = z.strictObject({
  max_trade_usd: usd,
  max_daily_usd: usd,
  max_price_impact_bps: z.number().int().min(0).max(10_000),
  allow_tokens: z.array(tokenRef).max(200),
  deny_tokens: z.array(tokenRef).max(200),
  paused: z.boolean(),
  /** A money move worth more than this waits for an owner's approval (docs/api.md, "Approvals"); null: none does. */
  require_approval_above_usd: usd.nullable(),
  /** How long such a move waits for a decision before it is rejected as `expired`. */
  approval_ttl_seconds: z.number().int().min(1).max(7 * 24 * 3600),
})
export type Policy = z.infer<typeof policySchema>

/** Lets a new user trade at once, yet caps a runaway agent. */
export const DEFAULT_POLICY: Policy = {
  max_trade_usd: '1000',
  max_daily_usd: '10000',
  max_price_impact_bps: 1500,
  allow_tokens: [],
  deny_tokens: [],
  paused: false,
  require_approval_above_usd: null,
  approval_ttl_seconds: 900,
}

/** A partial policy in a create or update body, merged over the current one. */
export const policyPatchSchema = policySchema.partial()

/** A policy as responses show it: the same rules, camelCase keys (request bodies stay snake_case). */
export function policyView(p: Policy) {
  return {
    maxTradeUsd: p.max_trade_usd,
    maxDailyUsd: p.max_daily_usd,
    maxPriceImpactBps: p.max_price_impact_bps,
    allowTokens: p.allow_tokens,
    denyTokens: p.deny_tokens,
    paused: p.paused,
    requireApprovalAboveUsd: p.require_approval_above_usd,
    approvalTtlSeconds: p.approval_ttl_seconds,
  }
}

/** A USD decimal string in cents, for exact comparisons. */
export const usdCents = (usd: string) => {
  const [i, f = ''] = usd.split('.')
  return BigInt(i || '0') * 100n + BigInt((f + '00').slice(0, 2))
}

/** A 0x address, as token lists hold them (symbols are resolved when the policy is set). */
export const isAddressEntry = (entry: string) => /^0x[0-9a-fA-F]{40}$/.test(entry)
