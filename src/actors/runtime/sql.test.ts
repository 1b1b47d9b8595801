import { describe, expect, it } from 'vitest'
import { preparedName } from './sql.ts'

describe('preparedName', () => {
  it('keeps a name that fits in 63 bytes, and gives two long names sharing their first 63 bytes different names that fit', () => {
    expect(preparedName('actor.commit')).toBe('actor.commit')
    const long = 'actor.commit+actor.insert+chat.message.insert+credits.reserve.write'
    const longer = `${long}?account.covers`
    expect(long.slice(0, 63)).toBe(longer.slice(0, 63))
    for (const n of [long, longer]) {
      expect(Buffer.byteLength(preparedName(n))).toBeLessThanOrEqual(63)
      expect(preparedName(n).startsWith(n.slice(0, 54))).toBe(true)
    }
    expect(preparedName(long)).not.toBe(preparedName(longer))
    expect(preparedName(long)).toBe(preparedName(long))
  })
})
