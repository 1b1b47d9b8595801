import { usdCents } from '../agents/policy.ts'
import {
  minutesOfRange, type OwnerPolicy, type PolicyAction, type PolicyCriterion, type PolicyInitiator, type PolicyOperationKind,
} from './ownerPolicy.schema.ts'

/** Where a policy comes from: the account's applies to every agent of it, the agent's to that agent. */
export type PolicyScope = 'account' | 'agent'

/** A token an operation gives (`in`) or gets (`out`): its address and symbol; `verified` as the token list says. */
export type PolicyToken = { address?: string | undefined; symbol?: string | undefined; verified?: boolean | undefined }

/** What the policy looks at in one money move. USD amounts as decimal strings. */
export type PolicyOperation = {
  kind: PolicyOperationKind
  initiator: PolicyInitiator
  tokensIn: readonly PolicyToken[]
  tokensOut: readonly PolicyToken[]
  /** Where the funds go, when they leave the agent (a transfer's recipient). */
  destination?: string | null | undefined
  /** USD value of what leaves the wallet. */
  usdValue: string
  /** Price impact in basis points, where there is one (swaps). */
  priceImpactBps?: number | null | undefined
  /** When the operation is evaluated (ms since the epoch): time_of_day reads its UTC minute. */
  atMs: number
  /**
   * USD already spent over each window a `net_usd_window` criterion names, keyed
   * `netWindowKey(scope, windowSeconds)` (see `netWindowsOf`), this operation excluded: the
   * criterion compares that plus the operation's own value.
   */
  netUsd?: Readonly<Record<string, string>> | undefined
}

/** One rule that matched, and why. */
export type MatchedRule = { rule: string; scope: PolicyScope; action: PolicyAction; reason: string }

/** `guardrails`: no rule matched, the agent's guardrails decide as they do without a policy. */
export type PolicyDecisionKind = PolicyAction | 'guardrails'

export type PolicyDecision = {
  decision: PolicyDecisionKind
  /** The rule that decided (the first matching rule of the winning action, account before agent); null for `guardrails`. */
  rule: { name: string; scope: PolicyScope } | null
  /** Every rule that matched, in order (account first), with its reason; only the deciding one unless `all`. */
  matched: MatchedRule[]
}

/** The policies an operation is evaluated against, the account's first. */
export type ScopedPolicy = { scope: PolicyScope; policy: OwnerPolicy }

type Facts = { op: PolicyOperation; usdCents: bigint; minute: number }
type Test = (f: Facts) => boolean
type CompiledRule = { name: string; action: PolicyAction; tests: Test[]; criteria: readonly PolicyCriterion[] }

export const netWindowKey = (scope: PolicyScope, windowSeconds: number) => `${scope}:${windowSeconds}`

const compare = (op: 'gt' | 'gte' | 'lt' | 'lte', a: bigint | number, b: bigint | number) =>
  op === 'gt' ? a > b : op === 'gte' ? a >= b : op === 'lt' ? a < b : a <= b

/** ETH and WETH are one asset, as the guardrails' lists hold them. */
const assetSymbol = (s: string) => {
  const l = s.toLowerCase()
  return l === 'weth' ? 'eth' : l
}

/**
 * A token list's test. An address entry matches the token's address. A symbol entry matches any
 * token of that symbol in a reject or require_approval rule (fails safe), and only a verified
 * one in an accept rule (an unverified token named USDC is not let through).
 */
function tokenTest(c: Extract<PolicyCriterion, { type: 'token' }>, action: PolicyAction): Test {
  const addresses = new Set(c.tokens.filter((t) => t.startsWith('0x')).map((t) => t.toLowerCase()))
  const symbols = new Set(c.tokens.filter((t) => !t.startsWith('0x')).map(assetSymbol))
  const anyToken = action !== 'accept'
  const hit = (list: readonly PolicyToken[]) =>
    list.some(
      (t) =>
        (t.address !== undefined && addresses.has(t.address.toLowerCase())) ||
        (t.symbol !== undefined && (anyToken || t.verified === true) && symbols.has(assetSymbol(t.symbol))),
    )
  if (c.side === 'in') return (f) => hit(f.op.tokensIn)
  if (c.side === 'out') return (f) => hit(f.op.tokensOut)
  return (f) => hit(f.op.tokensIn) || hit(f.op.tokensOut)
}

/** One criterion as a test over the operation's facts. A criterion over a fact the operation lacks (a swap's destination, a transfer's price impact) does not match. */
function compileCriterion(c: PolicyCriterion, action: PolicyAction): Test {
  switch (c.type) {
    case 'operation': {
      const set = new Set<string>(c.operations)
      return (f) => set.has(f.op.kind)
    }
    case 'initiator': {
      const set = new Set<string>(c.initiators)
      return (f) => set.has(f.op.initiator)
    }
    case 'token':
      return tokenTest(c, action)
    case 'destination': {
      const set = new Set(c.addresses.map((a) => a.toLowerCase()))
      return (f) => typeof f.op.destination === 'string' && set.has(f.op.destination.toLowerCase())
    }
    case 'usd_value': {
      const limit = usdCents(c.usd)
      return (f) => compare(c.operator, f.usdCents, limit)
    }
    case 'net_usd_window': {
      const limit = usdCents(c.usd)
      const key = netWindowKey(c.scope, c.windowSeconds)
      return (f) => compare(c.operator, usdCents(f.op.netUsd?.[key] ?? '0') + f.usdCents, limit)
    }
    case 'price_impact':
      return (f) => typeof f.op.priceImpactBps === 'number' && compare(c.operator, f.op.priceImpactBps, c.bps)
    case 'time_of_day': {
      const minutes = minutesOfRange(c.fromUtc, c.toUtc)
      return (f) => minutes[f.minute] === 1
    }
  }
}

const compiled = new WeakMap<OwnerPolicy, CompiledRule[]>()

/** The policy's rules as tests, made once per policy object (a stored policy is read once and kept). */
export function compileOwnerPolicy(policy: OwnerPolicy): CompiledRule[] {
  let rules = compiled.get(policy)
  if (!rules) {
    rules = policy.rules.map((r) => ({ name: r.name, action: r.action, criteria: r.criteria, tests: r.criteria.map((c) => compileCriterion(c, r.action)) }))
    compiled.set(policy, rules)
  }
  return rules
}

const describeCriterion = (c: PolicyCriterion): string => {
  switch (c.type) {
    case 'operation': return `operation is ${c.operations.join(' or ')}`
    case 'initiator': return `started by ${c.initiators.join(' or ')}`
    case 'token': return `token ${c.side === 'any' ? '' : `${c.side} `}is ${c.tokens.join(' or ')}`
    case 'destination': return `destination is ${c.addresses.join(' or ')}`
    case 'usd_value': return `USD value ${c.operator} ${c.usd}`
    case 'net_usd_window': return `net USD of the ${c.scope} over ${c.windowSeconds} s ${c.operator} ${c.usd}`
    case 'price_impact': return `price impact ${c.operator} ${c.bps} bps`
    case 'time_of_day': return `between ${c.fromUtc} and ${c.toUtc} UTC`
  }
}

const reasonOf = (r: CompiledRule) => (r.criteria.length === 0 ? 'matches every operation' : r.criteria.map(describeCriterion).join(', '))

const RANK: Record<PolicyAction, number> = { reject: 3, require_approval: 2, accept: 1 }

/**
 * Evaluates an operation against the account's and the agent's policies: reject wins over
 * everything, then `require_approval`, then `accept`; no matching rule leaves the decision to
 * the agent's guardrails (`guardrails`). The deciding rule is the first matching one of the
 * winning action, the account's before the agent's, so an agent's accept never overrides an
 * account's reject. `all` collects every matching rule with its reason (the dry run); without
 * it the evaluation stops at the first reject. Pure.
 *
 * @example
 * evaluateOwnerPolicies([{ scope: 'account', policy }], { kind: 'swap', initiator: 'api_key', tokensIn, tokensOut, usdValue: '250', atMs: Date.now() })
 * // { decision: 'reject', rule: { name: 'no memecoins', scope: 'account' }, matched: [...] }
 */
export function evaluateOwnerPolicies(policies: readonly ScopedPolicy[], op: PolicyOperation, { all = false }: { all?: boolean } = {}): PolicyDecision {
  const d = new Date(op.atMs)
  const facts: Facts = { op, usdCents: usdCents(op.usdValue), minute: d.getUTCHours() * 60 + d.getUTCMinutes() }
  let best: { rule: CompiledRule; scope: PolicyScope } | undefined
  const matched: MatchedRule[] = []
  for (const { scope, policy } of policies) {
    for (const rule of compileOwnerPolicy(policy)) {
      if (!all && best && RANK[rule.action] <= RANK[best.rule.action]) continue
      let hit = true
      for (const test of rule.tests) {
        if (!test(facts)) {
          hit = false
          break
        }
      }
      if (!hit) continue
      if (all) matched.push({ rule: rule.name, scope, action: rule.action, reason: reasonOf(rule) })
      if (!best || RANK[rule.action] > RANK[best.rule.action]) best = { rule, scope }
      if (!all && rule.action === 'reject') break
    }
    if (!all && best?.rule.action === 'reject') break
  }
  if (!best) return { decision: 'guardrails', rule: null, matched }
  const decided = { rule: best.rule.name, scope: best.scope, action: best.rule.action, reason: reasonOf(best.rule) }
  return { decision: best.rule.action, rule: { name: best.rule.name, scope: best.scope }, matched: all ? matched : [decided] }
}

/** The windows the policies' `net_usd_window` criteria name, once each: what the caller sums before evaluating. */
export function netWindowsOf(policies: readonly ScopedPolicy[]): Array<{ scope: PolicyScope; windowSeconds: number; key: string }> {
  const out = new Map<string, { scope: PolicyScope; windowSeconds: number; key: string }>()
  for (const { policy } of policies) {
    for (const rule of policy.rules) {
      for (const c of rule.criteria) {
        if (c.type === 'net_usd_window') out.set(netWindowKey(c.scope, c.windowSeconds), { scope: c.scope, windowSeconds: c.windowSeconds, key: netWindowKey(c.scope, c.windowSeconds) })
      }
    }
  }
  return [...out.values()]
}
