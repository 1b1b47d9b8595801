import { describe, expect, it } from 'vitest'
import { fieldErrorsOf } from '../fieldErrors.ts'
import { MAX_POLICY_RULES, ownerPolicySchema } from './ownerPolicy.schema.ts'

const errorsOf = (value: unknown) => {
  const r = ownerPolicySchema.safeParse(value)
  return r.success ? undefined : fieldErrorsOf(r.error)
}
const rule = (criteria: unknown[], extra: Record<string, unknown> = {}) => ({ name: 'r', action: 'reject', criteria, ...extra })
const A = '0x' + 'ab'.repeat(20)

describe('ownerPolicySchema', () => {
  it('takes a policy using every criterion, defaulting a token side to any', () => {
    const policy = {
      rules: [
        rule([
          { type: 'operation', operations: ['swap', 'transfer', 'launch', 'fee_claim', 'mirror_copy'] },
          { type: 'initiator', initiators: ['api_key', 'run', 'chat', 'automation', 'mirror'] },
          { type: 'token', tokens: ['USDC', A] },
          { type: 'destination', addresses: [A] },
          { type: 'usd_value', operator: 'gt', usd: '100.50' },
          { type: 'net_usd_window', scope: 'account', windowSeconds: 86_400, operator: 'gte', usd: '1000' },
          { type: 'price_impact', operator: 'lte', bps: 300 },
          { type: 'time_of_day', fromUtc: '22:00', toUtc: '06:00' },
        ]),
      ],
    }
    const parsed = ownerPolicySchema.parse(policy)
    expect(parsed.rules[0]!.criteria[2]).toEqual({ type: 'token', tokens: ['USDC', A], side: 'any' })
  })

  it('names an unknown criterion type', () => {
    expect(errorsOf({ rules: [rule([{ type: 'gas_price', gwei: 3 }])] })).toEqual({ 'rules.0.criteria.0.type': expect.stringContaining('Unknown criterion type') })
  })

  it('names an unknown field of a criterion, and an unknown action', () => {
    expect(errorsOf({ rules: [rule([{ type: 'usd_value', operator: 'gt', usd: '1', cents: 5 }], { action: 'allow' })] })).toEqual({
      'rules.0.action': expect.any(String),
      'rules.0.criteria.0.cents': 'Unknown field.',
    })
  })

  it('names a bad address, and a cut-short hex address among tokens', () => {
    expect(errorsOf({ rules: [rule([{ type: 'destination', addresses: [A, '0x1234'] }, { type: 'token', tokens: ['0xabc'] }])] })).toEqual({
      'rules.0.criteria.0.addresses.1': 'A 0x address of 40 hex digits.',
      'rules.0.criteria.1.tokens.0': 'A token symbol or a 0x address of 40 hex digits.',
    })
  })

  it('refuses USD amounts that are not decimal strings, and a window out of range', () => {
    expect(errorsOf({ rules: [rule([{ type: 'usd_value', operator: 'gt', usd: 5 }, { type: 'net_usd_window', scope: 'agent', windowSeconds: 10, operator: 'gt', usd: '1.234' }])] })).toEqual({
      'rules.0.criteria.0.usd': expect.any(String),
      'rules.0.criteria.1.windowSeconds': expect.any(String),
      'rules.0.criteria.1.usd': expect.any(String),
    })
  })

  it('names a time range that covers nothing, and ranges of one rule that never overlap', () => {
    expect(errorsOf({ rules: [rule([{ type: 'time_of_day', fromUtc: '10:00', toUtc: '10:00' }])] })).toEqual({ 'rules.0.criteria.0.toUtc': expect.stringContaining('covers no time') })
    const disjoint = rule([{ type: 'time_of_day', fromUtc: '09:00', toUtc: '10:00' }, { type: 'time_of_day', fromUtc: '22:00', toUtc: '08:59' }])
    expect(errorsOf({ rules: [disjoint] })).toEqual({ 'rules.0.criteria.1': expect.stringContaining('shares no minute') })
    // Overlapping ranges (one wrapping past midnight) can match: taken.
    const overlapping = rule([{ type: 'time_of_day', fromUtc: '22:00', toUtc: '06:00' }, { type: 'time_of_day', fromUtc: '05:00', toUtc: '07:00' }])
    expect(errorsOf({ rules: [overlapping] })).toBeUndefined()
    expect(errorsOf({ rules: [rule([{ type: 'time_of_day', fromUtc: '24:00', toUtc: '01:00' }])] })).toEqual({ 'rules.0.criteria.0.fromUtc': expect.any(String) })
  })

  it(`refuses more than ${MAX_POLICY_RULES} rules, and repeated rule names`, () => {
    const many = Array.from({ length: MAX_POLICY_RULES + 1 }, (_, i) => rule([], { name: `r${i}` }))
    expect(errorsOf({ rules: many })).toEqual({ rules: `At most ${MAX_POLICY_RULES} rules.` })
    expect(errorsOf({ rules: many.slice(0, MAX_POLICY_RULES) })).toBeUndefined()
    expect(errorsOf({ rules: [rule([]), rule([])] })).toEqual({ 'rules.1.name': 'Rule names must be unique within a policy.' })
  })

  it('refuses repeated list entries and empty lists', () => {
    expect(errorsOf({ rules: [rule([{ type: 'token', tokens: ['usdc', 'USDC'] }, { type: 'operation', operations: [] }])] })).toEqual({
      'rules.0.criteria.0.tokens': 'Entries must not repeat.',
      'rules.0.criteria.1.operations': expect.any(String),
    })
  })
})
