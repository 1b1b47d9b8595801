import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { cruise, type IConfiguration, type ICruiseResult, type IViolation } from 'dependency-cruiser'
import { describe, expect, it } from 'vitest'

const config = createRequire(import.meta.url)('../.dependency-cruiser.cjs') as Required<Pick<IConfiguration, 'forbidden' | 'options'>>

/** `from -> to (rule)`: one line per violation, for readable failures. */
const line = (v: Pick<IViolation, 'from' | 'to' | 'rule'>) => `${v.from} -> ${v.to} (${v.rule.name})`

/**
 * The import direction of docs/architecture.md, checked by dependency-cruiser over src/. Violations
 * that existed when the check was introduced are listed in .dependency-cruiser-known-violations.json
 * and are being removed as the domain moves behind ports: a new one fails, and so does a listed
 * one that no longer exists (take it off the list).
 */
describe('import direction', () => {
  it('src/domain imports no outer layer at run time beyond the listed known violations', async () => {
    const babelConfig = JSON.parse(readFileSync('.babelrc.deps.json', 'utf8')) as object
    const { output } = await cruise(
      ['src/**/*.ts'],
      { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden } },
      undefined,
      { babelConfig },
    )
    const result = output as ICruiseResult
    expect(result.summary.totalCruised).toBeGreaterThan(100)
    const found = new Set(result.summary.violations.map(line))
    const known = new Set(
      (JSON.parse(readFileSync('.dependency-cruiser-known-violations.json', 'utf8')) as IViolation[]).map(line),
    )
    expect([...found].filter((v) => !known.has(v)), 'new imports against the direction').toEqual([])
    expect([...known].filter((v) => !found.has(v)), 'fixed: remove from .dependency-cruiser-known-violations.json').toEqual([])
  })
})
