import { describe, expect, it } from 'vitest'
import { planGuardrailChange, type Guardrails } from './guardrailChange.ts'
import { DEFAULT_POLICY } from './policy.ts'

const A = '0x' + '1'.repeat(40)
const B = '0x' + '2'.repeat(40)
const C = '0x' + '3'.repeat(40)
const current: Guardrails = {
  policy: { ...DEFAULT_POLICY, max_trade_usd: '10', max_daily_usd: '100', max_price_impact_bps: 100, allow_tokens: [A, B], deny_tokens: [C], paused: true },
  payout_wallet: null,
}

describe('planGuardrailChange', () => {
  it('tightening applies at once', () => {
    const plan = planGuardrailChange(current, { policy: { max_trade_usd: '5', max_daily_usd: '99.99', max_price_impact_bps: 50, allow_tokens: [A], deny_tokens: [C, B] } })
    expect(plan.now).toEqual({ max_trade_usd: '5', max_daily_usd: '99.99', max_price_impact_bps: 50, allow_tokens: [A], deny_tokens: [C, B] })
    expect(plan.held).toEqual({})
    expect(plan.audit).toEqual([{ action: 'policy.change', timing: 'now', before: { max_trade_usd: '10', max_daily_usd: '100', max_price_impact_bps: 100, allow_tokens: [A, B], deny_tokens: [C] }, after: plan.now }])
  })

  it('loosening waits: a higher cap, unpausing, a wider allow list, a narrower deny list, a new payout wallet', () => {
    const plan = planGuardrailChange(current, {
      policy: { max_trade_usd: '999999999', paused: false, allow_tokens: [], deny_tokens: [] },
      payout_wallet: B,
    })
    expect(plan.now).toEqual({})
    expect(plan.held).toEqual({ max_trade_usd: '999999999', paused: false, allow_tokens: [], deny_tokens: [], payout_wallet: B })
    expect(plan.audit.map((a) => [a.action, a.timing])).toEqual([['policy.change', 'held'], ['payout_wallet.change', 'held']])
    expect(plan.audit[1]).toMatchObject({ before: { payout_wallet: null }, after: { payout_wallet: B } })
  })

  it('a mixed change: the tightening parts now, the loosening parts held', () => {
    const plan = planGuardrailChange(current, { policy: { max_trade_usd: '5', max_daily_usd: '1000', allow_tokens: [A, C], deny_tokens: [B] } })
    // Allow: A stays allowed now (B is dropped at once), C waits. Deny: B is denied now, C's removal waits.
    expect(plan.now).toEqual({ max_trade_usd: '5', allow_tokens: [A], deny_tokens: [C, B] })
    expect(plan.held).toEqual({ max_daily_usd: '1000', allow_tokens: [A, C], deny_tokens: [B] })
    expect(plan.audit.find((a) => a.timing === 'held')?.before).toEqual({ max_daily_usd: '100', allow_tokens: [A], deny_tokens: [C, B] })
  })

  it('pausing is immediate; clearing the payout wallet (pay the agent itself) is immediate; no-ops are named but change nothing', () => {
    const running = { ...current, policy: { ...current.policy, paused: false }, payout_wallet: A }
    const plan = planGuardrailChange(running, { policy: { paused: true, max_trade_usd: '10', allow_tokens: [B, A.toUpperCase().replace('0X', '0x')] }, payout_wallet: null })
    expect(plan.now).toEqual({ paused: true, payout_wallet: null })
    expect(plan.held).toEqual({})
    expect(plan.named).toEqual(['paused', 'max_trade_usd', 'allow_tokens', 'payout_wallet'])
  })

  it('an allow list with no entry in common with the current one waits whole (an empty list would allow everything)', () => {
    const plan = planGuardrailChange(current, { policy: { allow_tokens: [C] } })
    expect(plan.now).toEqual({})
    expect(plan.held).toEqual({ allow_tokens: [C] })
  })

  it('setting or lowering the approval threshold, or shortening its wait, is immediate; raising or clearing it waits', () => {
    expect(planGuardrailChange(current, { policy: { require_approval_above_usd: '500' } }).now).toEqual({ require_approval_above_usd: '500' })
    const guarded = { ...current, policy: { ...current.policy, require_approval_above_usd: '500' } }
    expect(planGuardrailChange(guarded, { policy: { require_approval_above_usd: '100' } }).now).toEqual({ require_approval_above_usd: '100' })
    expect(planGuardrailChange(guarded, { policy: { require_approval_above_usd: '900' } }).held).toEqual({ require_approval_above_usd: '900' })
    expect(planGuardrailChange(guarded, { policy: { require_approval_above_usd: null } }).held).toEqual({ require_approval_above_usd: null })
    expect(planGuardrailChange(current, { policy: { approval_ttl_seconds: 60 } }).now).toEqual({ approval_ttl_seconds: 60 })
    expect(planGuardrailChange(current, { policy: { approval_ttl_seconds: 3600 } }).held).toEqual({ approval_ttl_seconds: 3600 })
  })
})
