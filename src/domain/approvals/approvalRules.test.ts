import { describe, expect, it } from 'vitest'
import { approvalFor } from './approvalRules.ts'

describe('approvalFor', () => {
  const now = Date.parse('2026-01-01T00:00:00Z')
  it('asks for approval only above the threshold, expiring after the policy ttl', () => {
    expect(approvalFor({}, { opId: 'o', usdValue: '1000000', now })).toBeNull()
    expect(approvalFor({ require_approval_above_usd: '1000' }, { opId: 'o', usdValue: '1000.00', now })).toBeNull()
    expect(approvalFor({ require_approval_above_usd: '1000', approval_ttl_seconds: 60 }, { opId: 'o', usdValue: '1000.01', now })).toEqual({
      id: 'o', usdValue: '1000.01', thresholdUsd: '1000', requestedAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T00:01:00.000Z',
    })
  })
})
