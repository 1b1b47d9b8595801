/**
 * The owner's policy evaluation (src/domain/policies/ownerPolicyRules.ts) at 100 rules, side by
 * side with no policy, in one run: the account's and the agent's policies of 50 rules each, every
 * criterion kind among them, none matching the operation (the worst case: every rule is read
 * to its first failing criterion), then the same with a reject as the last rule. Pure CPU, no
 * service. Prints a table, then one JSON line (`perOpMicros`; `withinGoal`: the mean under 50 µs
 * at 100 rules; the p99 of batch means moves with whatever else the machine runs).
 * Run: `npm run -s bench:policies` (BENCH_POLICY_OPS to change the number of operations).
 */
import { ownerPolicySchema, type OwnerPolicy } from '../src/domain/policies/ownerPolicy.schema.ts'
import { evaluateOwnerPolicies, type PolicyOperation, type ScopedPolicy } from '../src/domain/policies/ownerPolicyRules.ts'
import { percentile } from './lib.ts'

const OPS = Number(process.env.BENCH_POLICY_OPS ?? 200_000)
const RULES = 100
const addr = (i: number) => '0x' + i.toString(16).padStart(40, '0')

/** Rule i: a kind of criterion that does not match the operation, after one that does. */
function ruleOf(i: number, action = 'accept') {
  const misses = [
    { type: 'destination', addresses: [addr(1000 + i)] },
    { type: 'token', tokens: [addr(2000 + i), `SYM${i}`], side: 'out' },
    { type: 'usd_value', operator: 'gt', usd: '100000' },
    { type: 'net_usd_window', scope: i % 2 ? 'agent' : 'account', windowSeconds: 3600 * (1 + (i % 24)), operator: 'gt', usd: '99999' },
    { type: 'price_impact', operator: 'gt', bps: 5000 },
    { type: 'initiator', initiators: ['mirror'] },
    { type: 'time_of_day', fromUtc: '03:00', toUtc: '03:30' },
  ]
  return { name: `rule ${i}`, action, criteria: [{ type: 'operation', operations: ['swap', 'transfer'] }, misses[i % misses.length]] }
}

const policyOf = (rules: unknown[]): OwnerPolicy => ownerPolicySchema.parse({ rules })
const half = RULES / 2
const none: ScopedPolicy[] = []
const hundred: ScopedPolicy[] = [
  { scope: 'account', policy: policyOf(Array.from({ length: half }, (_, i) => ruleOf(i))) },
  { scope: 'agent', policy: policyOf(Array.from({ length: half }, (_, i) => ruleOf(half + i))) },
]
const lastRejects: ScopedPolicy[] = [
  hundred[0]!,
  { scope: 'agent', policy: policyOf([...Array.from({ length: half - 1 }, (_, i) => ruleOf(half + i)), { name: 'stop', action: 'reject', criteria: [{ type: 'usd_value', operator: 'gte', usd: '1' }] }]) },
]
const netUsd = Object.fromEntries(['agent', 'account'].flatMap((s) => Array.from({ length: 24 }, (_, h) => [`${s}:${3600 * (h + 1)}`, '120.00'])))
const ops: PolicyOperation[] = Array.from({ length: 1024 }, (_, i) => ({
  kind: 'swap', initiator: 'api_key', tokensIn: [{ address: addr(1), symbol: 'USDC', verified: true }], tokensOut: [{ address: addr(5000 + (i % 7)), symbol: 'TOK', verified: false }],
  usdValue: `${100 + (i % 50)}.25`, priceImpactBps: 40, atMs: Date.parse('2026-12-07T12:00:00Z') + i * 1000, netUsd,
}))

/** Per-operation time in µs over batches of 1024 operations (a batch's mean), after a warm-up. */
function measure(policies: ScopedPolicy[], expected: string) {
  for (let i = 0; i < 20_000; i++) evaluateOwnerPolicies(policies, ops[i & 1023]!)
  const batches: number[] = []
  let decision = ''
  for (let done = 0; done < OPS; done += 1024) {
    const t = performance.now()
    for (let i = 0; i < 1024; i++) decision = evaluateOwnerPolicies(policies, ops[i]!).decision
    batches.push(((performance.now() - t) * 1000) / 1024)
  }
  if (decision !== expected) throw new Error(`expected ${expected}, got ${decision}`)
  batches.sort((a, b) => a - b)
  return { p50: +percentile(batches, 50).toFixed(3), p99: +percentile(batches, 99).toFixed(3), mean: +(batches.reduce((a, b) => a + b, 0) / batches.length).toFixed(3) }
}

const result = {
  noPolicy: measure(none, 'guardrails'),
  rules100NoMatch: measure(hundred, 'guardrails'),
  rules100LastRejects: measure(lastRejects, 'reject'),
}
console.log('µs per operation (mean of batches of 1024)   p50      p99')
for (const [k, v] of Object.entries(result)) console.log(`${k.padEnd(44)} ${String(v.p50).padStart(7)}  ${String(v.p99).padStart(7)}`)
console.log(JSON.stringify({ bench: 'policies', rules: RULES, operations: OPS, goalMicros: 50, perOpMicros: result, withinGoal: result.rules100NoMatch.mean < 50 && result.rules100LastRejects.mean < 50 }))
