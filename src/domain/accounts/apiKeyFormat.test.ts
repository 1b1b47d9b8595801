import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  API_KEY_LENGTH,
  API_KEY_PREFIX,
  API_KEY_RANDOM_LENGTH,
  generateApiKey,
  hashApiKey,
  hashesEqual,
  isWellFormedApiKey,
} from './apiKeyFormat.ts'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

function replaceAt(s: string, i: number, ch: string): string {
  return s.slice(0, i) + ch + s.slice(i + 1)
}

describe('generateApiKey', () => {
  it('produces a well-formed key whose hash is the SHA-256 of the value', () => {
    const key = generateApiKey()
    expect(key.value).toMatch(/^cpk_[0-9A-Za-z]{38}$/)
    expect(key.value).toHaveLength(API_KEY_LENGTH)
    expect(isWellFormedApiKey(key.value)).toBe(true)
    expect(key.hash).toBe(createHash('sha256').update(key.value).digest('hex'))
    expect(hashApiKey(key.value)).toBe(key.hash)
  })

  it('builds the hint from the first 4 random and the last 4 characters, never the secret', () => {
    for (let i = 0; i < 200; i++) {
      const { value, hint } = generateApiKey()
      expect(hint).toBe(`cpk_${value.slice(4, 8)}...${value.slice(-4)}`)
      expect(hint).not.toContain(value.slice(API_KEY_PREFIX.length))
      expect(hint.replace('...', '').length).toBeLessThan(value.length / 2)
    }
  })

  it('does not repeat', () => {
    const values = new Set(Array.from({ length: 1000 }, () => generateApiKey().value))
    expect(values.size).toBe(1000)
  })

  it('spreads random characters evenly over the base62 alphabet', () => {
    const counts = new Map<string, number>()
    const keys = 2000
    for (let i = 0; i < keys; i++) {
      const random = generateApiKey().value.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + API_KEY_RANDOM_LENGTH)
      for (const ch of random) counts.set(ch, (counts.get(ch) ?? 0) + 1)
    }
    expect([...counts.keys()].sort().join('')).toBe([...BASE62].sort().join(''))
    const expected = (keys * API_KEY_RANDOM_LENGTH) / 62 // ~1032; sd ~32
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan(expected * 0.8)
      expect(n).toBeLessThan(expected * 1.2)
    }
  })
})

describe('isWellFormedApiKey', () => {
  it('refuses every one-character substitution (random part and checksum)', () => {
    const { value } = generateApiKey()
    for (let i = API_KEY_PREFIX.length; i < value.length; i++) {
      const original = value[i]
      const other = BASE62[(BASE62.indexOf(original!) + 1 + ((i * 7) % 61)) % 62]!
      expect(other).not.toBe(original)
      expect(isWellFormedApiKey(replaceAt(value, i, other)), `position ${i}`).toBe(false)
    }
  })

  it('refuses adjacent transpositions', () => {
    const { value } = generateApiKey()
    for (let i = API_KEY_PREFIX.length; i < value.length - 1; i++) {
      if (value[i] === value[i + 1]) continue
      const swapped = value.slice(0, i) + value[i + 1] + value[i] + value.slice(i + 2)
      expect(isWellFormedApiKey(swapped), `position ${i}`).toBe(false)
    }
  })

  it('refuses a wrong prefix', () => {
    const { value } = generateApiKey()
    expect(isWellFormedApiKey('cpx_' + value.slice(4))).toBe(false)
    expect(isWellFormedApiKey('CPK_' + value.slice(4))).toBe(false)
    expect(isWellFormedApiKey('sk_' + value.slice(3))).toBe(false)
  })

  it('refuses a wrong length', () => {
    const { value } = generateApiKey()
    expect(isWellFormedApiKey(value.slice(0, -1))).toBe(false)
    expect(isWellFormedApiKey(value + 'a')).toBe(false)
    expect(isWellFormedApiKey('')).toBe(false)
    expect(isWellFormedApiKey(API_KEY_PREFIX)).toBe(false)
  })

  it('refuses characters outside base62', () => {
    const { value } = generateApiKey()
    for (const bad of ['-', '_', '+', '/', '=', ' ', 'é', '\n']) {
      expect(isWellFormedApiKey(replaceAt(value, 10, bad))).toBe(false)
    }
  })

  it('refuses non-strings without throwing', () => {
    expect(isWellFormedApiKey(undefined as unknown as string)).toBe(false)
    expect(isWellFormedApiKey(42 as unknown as string)).toBe(false)
  })
})

describe('hashesEqual', () => {
  it('compares by value, including unequal lengths', () => {
    const a = hashApiKey('cpk_a')
    expect(hashesEqual(a, hashApiKey('cpk_a'))).toBe(true)
    expect(hashesEqual(a, hashApiKey('cpk_b'))).toBe(false)
    expect(hashesEqual(a, a.slice(0, -1))).toBe(false)
    expect(hashesEqual('', '')).toBe(true)
  })
})
