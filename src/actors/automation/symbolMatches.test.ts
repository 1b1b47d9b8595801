import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { symbolMatches } from './automations.ts'

/** The reference: the pattern as a regular expression (fine for the short inputs drawn here). */
const byRegex = (pattern: string, symbol: string) =>
  new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\$]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 'i').test(symbol)

describe('a new_launch trigger\'s symbol pattern', () => {
  it('matches as the wildcard pattern reads: * any run, ? one character, any case', () => {
    expect(symbolMatches('PEPE*', 'pepe2')).toBe(true)
    expect(symbolMatches('*CAT', 'SuperCat')).toBe(true)
    expect(symbolMatches('C?T', 'CAT')).toBe(true)
    expect(symbolMatches('C?T', 'CT')).toBe(false)
    expect(symbolMatches('*', '')).toBe(true)
    expect(symbolMatches('A.B', 'AxB')).toBe(false)
  })

  it('decides as the regular expression it replaces, over seeded random patterns and symbols', () => {
    const chars = fc.constantFrom('a', 'b', 'A', '.', '$', '*', '?')
    fc.assert(
      fc.property(fc.string({ unit: chars, maxLength: 8 }), fc.string({ unit: fc.constantFrom('a', 'b', 'A', '.', '$'), maxLength: 10 }), (pattern, symbol) => {
        expect(symbolMatches(pattern, symbol)).toBe(byRegex(pattern, symbol))
      }),
      { seed: 7, numRuns: 2000 },
    )
  })

  it('answers at once for a pattern whose regular expression backtracks exponentially (one launch could stop the node)', () => {
    expect(symbolMatches('*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(32))).toBe(false)
    expect(symbolMatches('*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b', `${'a'.repeat(31)}b`)).toBe(true)
  })
})
