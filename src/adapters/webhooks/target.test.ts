import { describe, expect, it } from 'vitest'
import { refusedAddress } from './target.ts'
import { retryDelayMs } from './dispatcher.ts'

describe('refusedAddress', () => {
  const none = { allowHttp: false, privateTargets: 'none' as const }
  it('allows public unicast only, by default', () => {
    expect(refusedAddress('93.184.215.14', none)).toBeUndefined()
    expect(refusedAddress('2606:2800:21f:cb07:6820:80da:af6b:8b2c', none)).toBeUndefined()
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.1.1', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fc00::1', '::ffff:127.0.0.1', '224.0.0.1']) {
      expect(refusedAddress(a, none), a).toBeDefined()
    }
  })
  it('loopback and all relax it, never for the metadata address', () => {
    expect(refusedAddress('127.0.0.2', { ...none, privateTargets: 'loopback' })).toBeUndefined()
    expect(refusedAddress('10.0.0.1', { ...none, privateTargets: 'loopback' })).toContain('private')
    expect(refusedAddress('10.0.0.1', { ...none, privateTargets: 'all' })).toBeUndefined()
    expect(refusedAddress('169.254.169.254', { ...none, privateTargets: 'all' })).toContain('metadata')
  })
})

describe('retryDelayMs', () => {
  const s = { retryBaseMs: 5000, maxDelayMs: 3 * 3600_000 }
  it('doubles from the base up to the cap, with 50-100 % jitter', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, s, () => 1))).toEqual([5000, 10_000, 20_000, 40_000])
    expect(retryDelayMs(1, s, () => 0)).toBe(2500)
    expect(retryDelayMs(40, s, () => 1)).toBe(3 * 3600_000)
  })
})
