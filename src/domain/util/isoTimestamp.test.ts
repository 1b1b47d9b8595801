import { describe, expect, it } from 'vitest'
import { isoTimestamp } from './isoTimestamp.ts'

describe('isoTimestamp', () => {
  it('passes an ISO UTC string through unchanged', () => {
    expect(isoTimestamp('2026-11-23T12:00:00.123Z')).toBe('2026-11-23T12:00:00.123Z')
  })
  it("normalises PostgreSQL's text form and a Date to ISO UTC with milliseconds", () => {
    expect(isoTimestamp('2026-11-23 14:00:00.123456+02')).toBe('2026-11-23T12:00:00.123Z')
    expect(isoTimestamp(new Date(Date.UTC(2026, 10, 23, 12)))).toBe('2026-11-23T12:00:00.000Z')
  })
})
