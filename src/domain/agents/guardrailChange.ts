import { usdCents, type Policy } from './policy.ts'

/** What a policy or payout-wallet change is judged against: the agent's effective guardrails. */
export type Guardrails = { policy: Policy; payout_wallet: string | null }

/** A guarded field: one policy rule, or the payout wallet. */
export type GuardedField = keyof Policy | 'payout_wallet'

/** The guarded fields a request names, with their new values (token lists already as addresses). */
export type GuardrailPatch = { policy?: Partial<Policy> | undefined; payout_wallet?: string | null | undefined }

type Values = Partial<Policy> & { payout_wallet?: string | null }

/** One journal entry: the fields that change at one moment, before and after. */
export type GuardrailAuditPart = {
  action: 'policy.change' | 'payout_wallet.change'
  timing: 'now' | 'held'
  before: Values
  after: Values
}

export type GuardrailChangePlan = {
  /** Applied at once (tightening). */
  now: Values
  /** Applied when the hold has passed (loosening); each replaces the field's earlier pending change. */
  held: Values
  /** Every field the request names: its earlier pending change is dropped (the latest request wins). */
  named: GuardedField[]
  audit: GuardrailAuditPart[]
}

const norm = (list: readonly string[]) => [...new Set(list.map((e) => e.toLowerCase()))]
const subset = (a: readonly string[], b: readonly string[]) => a.every((e) => b.includes(e))
const sameSet = (a: readonly string[], b: readonly string[]) => subset(a, b) && subset(b, a)

type Split<T> = { now?: T; held?: T }

/** An empty allow list allows every token, so it is the widest. */
function splitAllow(current: readonly string[], next: readonly string[]): Split<string[]> {
  const cur = norm(current)
  const nw = norm(next)
  if (sameSet(cur, nw)) return {}
  if (nw.length > 0 && (cur.length === 0 || subset(nw, cur))) return { now: nw }
  // Wider: what both lists allow applies now, the rest waits (an empty list cannot mean "nothing").
  const both = cur.filter((e) => nw.includes(e))
  return both.length > 0 && both.length < cur.length ? { now: both, held: nw } : { held: nw }
}

function splitDeny(current: readonly string[], next: readonly string[]): Split<string[]> {
  const cur = norm(current)
  const nw = norm(next)
  if (sameSet(cur, nw)) return {}
  if (subset(cur, nw)) return { now: nw }
  // Narrower: new entries are denied now, removals wait.
  const union = norm([...cur, ...nw])
  return union.length > cur.length ? { now: union, held: nw } : { held: nw }
}

function splitCap<T>(current: T, next: T, looser: (a: T, b: T) => boolean): Split<T> {
  if (next === current) return {}
  return looser(next, current) ? { held: next } : { now: next }
}

function splitField(field: GuardedField, current: Guardrails, next: unknown): Split<unknown> {
  const p = current.policy
  switch (field) {
    case 'max_trade_usd':
    case 'max_daily_usd':
      return splitCap(p[field], next as string, (a, b) => usdCents(a) > usdCents(b))
    case 'max_price_impact_bps':
      return splitCap(p[field], next as number, (a, b) => a > b)
    case 'paused':
      return splitCap(p.paused, next as boolean, (a, b) => b && !a)
    // No approval rule is the widest; a higher threshold is looser.
    case 'require_approval_above_usd':
      return splitCap(p[field], next as string | null, (a, b) => a === null || (b !== null && usdCents(a) > usdCents(b)))
    // A longer wait lets a move be approved at an older price.
    case 'approval_ttl_seconds':
      return splitCap(p[field], next as number, (a, b) => a > b)
    case 'allow_tokens':
      return splitAllow(p.allow_tokens, next as string[])
    case 'deny_tokens':
      return splitDeny(p.deny_tokens, next as string[])
    case 'payout_wallet': {
      const nw = (next as string | null)?.toLowerCase() ?? null
      if (nw === (current.payout_wallet?.toLowerCase() ?? null)) return {}
      // No payout wallet pays the agent's own wallet: never a loosening.
      return nw === null ? { now: null } : { held: nw }
    }
  }
}

/**
 * Splits a change of guardrails into what tightens protection (applied at once) and what
 * loosens it (applied after the hold): a higher cap or impact limit, a wider allow list, a
 * narrower deny list, unpausing, a new payout wallet. Pure.
 *
 * @example
 * planGuardrailChange({ policy, payout_wallet: null }, { policy: { max_trade_usd: '5', paused: false } })
 * // { now: { max_trade_usd: '5' }, held: { paused: false }, ... } when the agent was paused with a cap of 10
 */
export function planGuardrailChange(current: Guardrails, patch: GuardrailPatch): GuardrailChangePlan {
  const now: Record<string, unknown> = {}
  const held: Record<string, unknown> = {}
  const named: GuardedField[] = []
  const entries: Array<[GuardedField, unknown]> = [
    ...(Object.entries(patch.policy ?? {}) as Array<[keyof Policy, unknown]>).filter(([, v]) => v !== undefined),
    ...(patch.payout_wallet !== undefined ? [['payout_wallet', patch.payout_wallet] as [GuardedField, unknown]] : []),
  ]
  for (const [field, value] of entries) {
    named.push(field)
    const split = splitField(field, current, value)
    if ('now' in split) now[field] = split.now
    if ('held' in split) held[field] = split.held
  }
  const valueOf = (field: string): unknown => (field === 'payout_wallet' ? current.payout_wallet : current.policy[field as keyof Policy])
  const audit: GuardrailAuditPart[] = []
  for (const action of ['policy.change', 'payout_wallet.change'] as const) {
    const ofAction = (f: string) => (f === 'payout_wallet') === (action === 'payout_wallet.change')
    const nowFields = Object.keys(now).filter(ofAction)
    const heldFields = Object.keys(held).filter(ofAction)
    if (nowFields.length > 0) {
      audit.push({ action, timing: 'now', before: pick(nowFields, valueOf), after: pick(nowFields, (f) => now[f]) })
    }
    if (heldFields.length > 0) {
      // A held part changes the value as it will be once the immediate part has applied.
      audit.push({ action, timing: 'held', before: pick(heldFields, (f) => (f in now ? now[f] : valueOf(f))), after: pick(heldFields, (f) => held[f]) })
    }
  }
  return { now: now as Values, held: held as Values, named, audit }
}

const pick = (fields: string[], value: (f: string) => unknown): Values => Object.fromEntries(fields.map((f) => [f, value(f)])) as Values
