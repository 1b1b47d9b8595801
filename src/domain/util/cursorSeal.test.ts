import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createCursorSeal } from './cursorSeal.ts'
import { ValidationError } from '../errors.ts'

const refusal = (fn: () => unknown) => {
  try {
    fn()
  } catch (err) {
    return err instanceof ValidationError ? err.fieldErrors : err
  }
  return 'accepted'
}

describe('createCursorSeal', () => {
  const masterKey = randomBytes(32)

  it('opens what it sealed, with the same master key after a restart too', () => {
    const sealed = createCursorSeal({ masterKey }).seal('WzEsMl0')
    expect(sealed).toMatch(/^WzEsMl0\.[A-Za-z0-9_-]{22}$/)
    expect(createCursorSeal({ masterKey: Buffer.from(masterKey) }).open(sealed)).toBe('WzEsMl0')
  })

  it('refuses, naming cursor, a cursor sealed with another key, altered, unsigned, or too long', () => {
    const seal = createCursorSeal({ masterKey })
    const sealed = seal.seal('WzEsMl0')
    const tag = sealed.slice(sealed.indexOf('.') + 1)
    const other = createCursorSeal({ masterKey: randomBytes(32) }).seal('WzEsMl0')
    for (const bad of [other, 'WzEsMl1.' + tag, sealed.slice(0, -1), `${sealed}A`, 'WzEsMl0', '', `${'a'.repeat(600)}.${tag}`, `WzEsMl0.${tag.slice(0, -1)}=`]) {
      expect({ bad, refused: refusal(() => seal.open(bad)) }).toEqual({ bad, refused: { cursor: 'Invalid cursor.' } })
    }
  })
})
