import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ownerPolicySchema, type OwnerPolicy } from './ownerPolicy.schema.ts'
import { evaluateOwnerPolicies, type PolicyOperation, type PolicyScope } from './ownerPolicyRules.ts'

/**
 * The evaluator against a reference written apart here, over random policies (account and agent)
 * and random operations: the same decision, the same deciding rule, the same matched rules. The
 * reference reads every rule naively, compares USD as integer cents parsed by hand, and tests
 * time ranges by their two ends instead of a minute table.
 */
const ADDRS = ['0x' + '11'.repeat(20), '0x' + '22'.repeat(20), '0x' + 'aB'.repeat(20), '0x' + '44'.repeat(20)]
const SYMBOLS = ['USDC', 'ETH', 'WETH', 'MEME', 'usdc']
const TOKENS = [...ADDRS, ...SYMBOLS]
const OPS = ['swap', 'transfer', 'launch', 'fee_claim', 'mirror_copy'] as const
const INITIATORS = ['api_key', 'run', 'chat', 'automation', 'mirror'] as const
const CMP = ['gt', 'gte', 'lt', 'lte'] as const
const WINDOWS = [60, 3600, 86_400]

const usd = fc.oneof(fc.integer({ min: 0, max: 2000 }).map(String), fc.tuple(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 0, max: 99 })).map(([a, b]) => `${a}.${String(b).padStart(2, '0')}`))
const hhmm = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 15, 30, 59)).map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`)
const someOf = <T>(xs: readonly T[]) => fc.uniqueArray(fc.constantFrom(...xs), { minLength: 1, maxLength: xs.length, comparator: (a, b) => String(a).toLowerCase() === String(b).toLowerCase() })

const criterion = fc.oneof(
  fc.record({ type: fc.constant('operation'), operations: someOf(OPS) }),
  fc.record({ type: fc.constant('initiator'), initiators: someOf(INITIATORS) }),
  fc.record({ type: fc.constant('token'), tokens: someOf(TOKENS), side: fc.constantFrom('in', 'out', 'any') }),
  fc.record({ type: fc.constant('destination'), addresses: someOf(ADDRS) }),
  fc.record({ type: fc.constant('usd_value'), operator: fc.constantFrom(...CMP), usd }),
  fc.record({ type: fc.constant('net_usd_window'), scope: fc.constantFrom('agent', 'account'), windowSeconds: fc.constantFrom(...WINDOWS), operator: fc.constantFrom(...CMP), usd }),
  fc.record({ type: fc.constant('price_impact'), operator: fc.constantFrom(...CMP), bps: fc.integer({ min: 0, max: 500 }) }),
  fc.record({ type: fc.constant('time_of_day'), fromUtc: hhmm, toUtc: hhmm }),
)
const rule = fc.record({ action: fc.constantFrom('reject', 'require_approval', 'accept'), criteria: fc.array(criterion, { maxLength: 3 }) })
/** A random policy, kept only when the schema takes it (no empty or disjoint time ranges). */
const policy = fc
  .array(rule, { maxLength: 8 })
  .map((rules) => ownerPolicySchema.safeParse({ rules: rules.map((r, i) => ({ name: `rule ${i}`, ...r })) }))
  .filter((r) => r.success)
  .map((r) => r.data!)

const token = fc.record({ address: fc.option(fc.constantFrom(...ADDRS.map((a) => a.toLowerCase())), { nil: undefined }), symbol: fc.option(fc.constantFrom('USDC', 'ETH', 'WETH', 'MEME', 'DOGE'), { nil: undefined }), verified: fc.boolean() })
const operation: fc.Arbitrary<PolicyOperation> = fc.record({
  kind: fc.constantFrom(...OPS),
  initiator: fc.constantFrom(...INITIATORS),
  tokensIn: fc.array(token, { maxLength: 2 }),
  tokensOut: fc.array(token, { maxLength: 2 }),
  destination: fc.option(fc.constantFrom(...ADDRS), { nil: undefined }),
  usdValue: usd,
  priceImpactBps: fc.option(fc.integer({ min: 0, max: 500 }), { nil: undefined }),
  atMs: fc.integer({ min: 0, max: 2 * 86_400_000 - 1 }).map((ms) => Date.parse('2026-12-07T00:00:00Z') + ms),
  netUsd: fc.record(Object.fromEntries(['agent', 'account'].flatMap((s) => WINDOWS.map((w) => [`${s}:${w}`, usd])))),
})

// ---- the reference ----
const cents = (s: string) => {
  const [whole, frac = ''] = s.split('.')
  return Number(whole) * 100 + Number(frac.padEnd(2, '0'))
}
const cmp = (op: string, a: number, b: number) => ({ gt: a > b, gte: a >= b, lt: a < b, lte: a <= b })[op]!
const canon = (s: string) => (s.toLowerCase() === 'weth' ? 'eth' : s.toLowerCase())
function refCriterion(c: OwnerPolicy['rules'][number]['criteria'][number], action: string, op: PolicyOperation): boolean {
  switch (c.type) {
    case 'operation': return (c.operations as string[]).includes(op.kind)
    case 'initiator': return (c.initiators as string[]).includes(op.initiator)
    case 'token': {
      const list = c.side === 'in' ? op.tokensIn : c.side === 'out' ? op.tokensOut : [...op.tokensIn, ...op.tokensOut]
      return list.some((t) => c.tokens.some((e) => (e.startsWith('0x')
        ? t.address?.toLowerCase() === e.toLowerCase()
        : t.symbol !== undefined && canon(t.symbol) === canon(e) && (action !== 'accept' || t.verified === true))))
    }
    case 'destination': return op.destination != null && c.addresses.some((a) => a.toLowerCase() === op.destination!.toLowerCase())
    case 'usd_value': return cmp(c.operator, cents(op.usdValue), cents(c.usd))
    case 'net_usd_window': return cmp(c.operator, cents(op.netUsd?.[`${c.scope}:${c.windowSeconds}`] ?? '0') + cents(op.usdValue), cents(c.usd))
    case 'price_impact': return op.priceImpactBps != null && cmp(c.operator, op.priceImpactBps, c.bps)
    case 'time_of_day': {
      const d = new Date(op.atMs)
      const m = d.getUTCHours() * 60 + d.getUTCMinutes()
      const [from, to] = [c.fromUtc, c.toUtc].map((t) => Number(t.slice(0, 2)) * 60 + Number(t.slice(3)))
      return from! < to! ? m >= from! && m < to! : m >= from! || m < to!
    }
  }
}
function reference(policies: Array<{ scope: PolicyScope; policy: OwnerPolicy }>, op: PolicyOperation) {
  const matched = policies.flatMap(({ scope, policy }) => policy.rules.filter((r) => r.criteria.every((c) => refCriterion(c, r.action, op))).map((r) => ({ rule: r.name, scope, action: r.action })))
  for (const action of ['reject', 'require_approval', 'accept'] as const) {
    const first = matched.find((m) => m.action === action)
    if (first) return { decision: action, rule: { name: first.rule, scope: first.scope }, matched }
  }
  return { decision: 'guardrails', rule: null, matched }
}

describe('evaluateOwnerPolicies against a reference', () => {
  it('decides as the reference, with the same deciding rule and the same matched rules', () => {
    fc.assert(
      fc.property(policy, policy, operation, (account, agent, op) => {
        const scoped = [{ scope: 'account' as const, policy: account }, { scope: 'agent' as const, policy: agent }]
        const want = reference(scoped, op)
        const quick = evaluateOwnerPolicies(scoped, op)
        expect({ decision: quick.decision, rule: quick.rule }).toEqual({ decision: want.decision, rule: want.rule })
        const full = evaluateOwnerPolicies(scoped, op, { all: true })
        expect({ decision: full.decision, rule: full.rule }).toEqual({ decision: want.decision, rule: want.rule })
        expect(full.matched.map(({ rule, scope, action }) => ({ rule, scope, action }))).toEqual(want.matched)
      }),
      { numRuns: 3000 },
    )
  })
})
