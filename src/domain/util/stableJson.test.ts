import { describe, expect, it } from 'vitest'
import { stableJson } from './stableJson.ts'

describe('stableJson', () => {
  it('gives the same text whatever the key order, at every depth, as JSON.stringify would (undefined left out, toJSON used)', () => {
    const a = { b: 1, a: { d: [{ y: 1, x: 2 }], c: undefined }, t: new Date(0) }
    const b = { t: new Date(0), a: { c: undefined, d: [{ x: 2, y: 1 }] }, b: 1 }
    expect(stableJson(a)).toBe('{"a":{"d":[{"x":2,"y":1}]},"b":1,"t":"1970-01-01T00:00:00.000Z"}')
    expect(stableJson(b)).toBe(stableJson(a))
    expect(JSON.parse(stableJson(a))).toEqual(JSON.parse(JSON.stringify(a)))
    expect(stableJson(null)).toBe('null')
    expect(stableJson('x')).toBe('"x"')
  })
})
