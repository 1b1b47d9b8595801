import { describe, expect, it } from 'vitest'
import { ownerPolicySchema, type OwnerPolicy } from './ownerPolicy.schema.ts'
import { planOwnerPolicyChange, tightens } from './policyChange.ts'

const p = (...rules: unknown[]): OwnerPolicy => ownerPolicySchema.parse({ rules })
const cap = (usd: string, name = 'cap', action = 'reject') => ({ name, action, criteria: [{ type: 'usd_value', operator: 'gt', usd }] })
const swaps = (name = 'swaps ok') => ({ name, action: 'accept', criteria: [{ type: 'operation', operations: ['swap'] }] })

describe('planOwnerPolicyChange', () => {
  it('applies at once what adds a reject or an approval, removes an accept, renames or reorders', () => {
    const current = p(cap('100'), swaps())
    expect(planOwnerPolicyChange(current, p(cap('100'), swaps(), cap('50', 'ask', 'require_approval')))).toEqual({ now: expect.any(Object), held: null })
    expect(planOwnerPolicyChange(current, p(cap('100')))).toEqual({ now: p(cap('100')), held: null })
    expect(planOwnerPolicyChange(current, p(swaps(), cap('100', 'renamed')))).toEqual({ now: p(swaps(), cap('100', 'renamed')), held: null })
    // An approval made a reject tightens.
    expect(tightens(p(cap('100', 'a', 'require_approval')), p(cap('100', 'a', 'reject')))).toBe(true)
  })

  it('holds what removes or narrows a reject, raises a limit, or adds an accept', () => {
    const current = p(cap('100'))
    expect(planOwnerPolicyChange(current, p())).toEqual({ now: null, held: p() })
    expect(planOwnerPolicyChange(current, p(cap('1000')))).toEqual({ now: null, held: p(cap('1000')) })
    expect(planOwnerPolicyChange(current, p(cap('100'), swaps()))).toEqual({ now: null, held: p(cap('100'), swaps()) })
    expect(tightens(p(cap('100', 'a', 'reject')), p(cap('100', 'a', 'require_approval')))).toBe(false)
  })

  it('applies the new rejects of a loosening at once beside the current rules, and holds the whole', () => {
    const current = p(cap('100'))
    const next = p(cap('1000'), { name: 'no nights', action: 'reject', criteria: [{ type: 'time_of_day', fromUtc: '22:00', toUtc: '06:00' }] })
    expect(planOwnerPolicyChange(current, next)).toEqual({ now: { rules: [...current.rules, next.rules[1]] }, held: next })
  })

  it('changes nothing for the same policy', () => {
    expect(planOwnerPolicyChange(p(cap('1')), p(cap('1')))).toEqual({ now: null, held: null })
  })
})
