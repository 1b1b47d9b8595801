import { describe, expect, it } from 'vitest'
import { ownerPolicySchema, type OwnerPolicy } from './ownerPolicy.schema.ts'
import { evaluateOwnerPolicies, netWindowKey, netWindowsOf, type PolicyOperation } from './ownerPolicyRules.ts'

const USDC = '0x' + '11'.repeat(20)
const MEME = '0x' + '22'.repeat(20)
const FRIEND = '0x' + '33'.repeat(20)
const policy = (rules: unknown[]): OwnerPolicy => ownerPolicySchema.parse({ rules })
const at = (hhmm: string) => Date.parse(`2026-12-07T${hhmm}:00Z`)
const swap = (over: Partial<PolicyOperation> = {}): PolicyOperation => ({
  kind: 'swap', initiator: 'api_key', tokensIn: [{ address: USDC, symbol: 'USDC', verified: true }],
  tokensOut: [{ address: MEME, symbol: 'MEME', verified: false }], usdValue: '100', priceImpactBps: 50, atMs: at('12:00'), ...over,
})

describe('evaluateOwnerPolicies', () => {
  it('falls back to the guardrails when no rule matches, or there is no policy', () => {
    expect(evaluateOwnerPolicies([], swap())).toEqual({ decision: 'guardrails', rule: null, matched: [] })
    const p = policy([{ name: 'big', action: 'reject', criteria: [{ type: 'usd_value', operator: 'gt', usd: '1000' }] }])
    expect(evaluateOwnerPolicies([{ scope: 'agent', policy: p }], swap()).decision).toBe('guardrails')
  })

  it('lets reject win over require_approval and accept, whatever their order', () => {
    const p = policy([
      { name: 'ok', action: 'accept', criteria: [] },
      { name: 'ask', action: 'require_approval', criteria: [{ type: 'usd_value', operator: 'gte', usd: '50' }] },
      { name: 'no meme', action: 'reject', criteria: [{ type: 'token', tokens: [MEME], side: 'out' }] },
    ])
    const d = evaluateOwnerPolicies([{ scope: 'agent', policy: p }], swap(), { all: true })
    expect(d.decision).toBe('reject')
    expect(d.rule).toEqual({ name: 'no meme', scope: 'agent' })
    expect(d.matched.map((m) => m.rule)).toEqual(['ok', 'ask', 'no meme'])
    expect(evaluateOwnerPolicies([{ scope: 'agent', policy: p }], swap({ tokensOut: [] })).rule).toEqual({ name: 'ask', scope: 'agent' })
    expect(evaluateOwnerPolicies([{ scope: 'agent', policy: p }], swap({ tokensOut: [], usdValue: '10' })).decision).toBe('accept')
  })

  it("never lets an agent's accept override the account's reject", () => {
    const account = policy([{ name: 'no transfers', action: 'reject', criteria: [{ type: 'operation', operations: ['transfer'] }] }])
    const agent = policy([{ name: 'all fine', action: 'accept', criteria: [] }])
    const d = evaluateOwnerPolicies([{ scope: 'account', policy: account }, { scope: 'agent', policy: agent }], swap({ kind: 'transfer', destination: FRIEND }))
    expect(d).toMatchObject({ decision: 'reject', rule: { name: 'no transfers', scope: 'account' } })
    expect(d.matched[0]!.reason).toBe('operation is transfer')
  })

  it('matches a destination, an initiator and a price impact, and not a fact the operation lacks', () => {
    const p = policy([
      { name: 'friend', action: 'require_approval', criteria: [{ type: 'destination', addresses: [FRIEND.toUpperCase().replace('0X', '0x')] }] },
      { name: 'impact', action: 'reject', criteria: [{ type: 'price_impact', operator: 'gt', bps: 100 }, { type: 'initiator', initiators: ['run', 'chat'] }] },
    ])
    const scoped = [{ scope: 'agent' as const, policy: p }]
    expect(evaluateOwnerPolicies(scoped, swap({ kind: 'transfer', destination: FRIEND, priceImpactBps: undefined })).decision).toBe('require_approval')
    expect(evaluateOwnerPolicies(scoped, swap({ priceImpactBps: 150, initiator: 'run' })).decision).toBe('reject')
    expect(evaluateOwnerPolicies(scoped, swap({ priceImpactBps: 150, initiator: 'api_key' })).decision).toBe('guardrails')
    expect(evaluateOwnerPolicies(scoped, swap({ priceImpactBps: null, initiator: 'run' })).decision).toBe('guardrails')
  })

  it('matches a symbol on any token for a reject, only on a verified one for an accept (ETH and WETH alike)', () => {
    const reject = policy([{ name: 'no fake usdc', action: 'reject', criteria: [{ type: 'token', tokens: ['usdc'] }] }])
    const accept = policy([{ name: 'usdc ok', action: 'accept', criteria: [{ type: 'token', tokens: ['USDC'], side: 'in' }] }])
    const fake = swap({ tokensIn: [{ address: MEME, symbol: 'USDC', verified: false }] })
    expect(evaluateOwnerPolicies([{ scope: 'agent', policy: reject }], fake).decision).toBe('reject')
    expect(evaluateOwnerPolicies([{ scope: 'agent', policy: accept }], fake).decision).toBe('guardrails')
    expect(evaluateOwnerPolicies([{ scope: 'agent', policy: accept }], swap()).decision).toBe('accept')
    const eth = policy([{ name: 'eth', action: 'reject', criteria: [{ type: 'token', tokens: ['ETH'], side: 'out' }] }])
    expect(evaluateOwnerPolicies([{ scope: 'agent', policy: eth }], swap({ tokensOut: [{ symbol: 'WETH', verified: true }] })).decision).toBe('reject')
  })

  it('compares the net USD of a window plus the operation itself', () => {
    const p = policy([{ name: 'budget', action: 'reject', criteria: [{ type: 'net_usd_window', scope: 'account', windowSeconds: 3600, operator: 'gt', usd: '500' }] }])
    const scoped = [{ scope: 'account' as const, policy: p }]
    expect(netWindowsOf(scoped)).toEqual([{ scope: 'account', windowSeconds: 3600, key: 'account:3600' }])
    expect(evaluateOwnerPolicies(scoped, swap({ netUsd: { [netWindowKey('account', 3600)]: '400' } })).decision).toBe('guardrails')
    expect(evaluateOwnerPolicies(scoped, swap({ netUsd: { [netWindowKey('account', 3600)]: '400.01' } })).decision).toBe('reject')
  })

  it('reads the UTC minute for time ranges, wrapping past midnight', () => {
    const p = policy([{ name: 'night', action: 'reject', criteria: [{ type: 'time_of_day', fromUtc: '22:00', toUtc: '06:00' }] }])
    const scoped = [{ scope: 'agent' as const, policy: p }]
    expect(evaluateOwnerPolicies(scoped, swap({ atMs: at('23:30') })).decision).toBe('reject')
    expect(evaluateOwnerPolicies(scoped, swap({ atMs: at('05:59') })).decision).toBe('reject')
    expect(evaluateOwnerPolicies(scoped, swap({ atMs: at('06:00') })).decision).toBe('guardrails')
    expect(evaluateOwnerPolicies(scoped, swap({ atMs: at('21:59') })).decision).toBe('guardrails')
  })
})
