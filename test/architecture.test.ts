import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { cruise, type IConfiguration, type ICruiseResult, type IViolation } from 'dependency-cruiser'
import { beforeAll, describe, expect, it } from 'vitest'

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
  let violations: string[] = []
  let known: string[] = []
  beforeAll(async () => {
    const babelConfig = JSON.parse(readFileSync('.babelrc.deps.json', 'utf8')) as object
    const { output } = await cruise(
      ['src/**/*.ts'],
      { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden } },
      undefined,
      { babelConfig },
    )
    const result = output as ICruiseResult
    expect(result.summary.totalCruised).toBeGreaterThan(100)
    violations = [...new Set(result.summary.violations.map(line))]
    known = (JSON.parse(readFileSync('.dependency-cruiser-known-violations.json', 'utf8')) as IViolation[]).map(line)
  }, 180_000)

  it('no import against the direction (src/domain into an outer layer, a front door into the chain) beyond the listed known violations', () => {
    expect(violations.filter((v) => !known.includes(v)), 'new imports against the direction').toEqual([])
    expect(known.filter((v) => !violations.includes(v)), 'fixed: remove from .dependency-cruiser-known-violations.json').toEqual([])
  })

  it('holds every run-time rule docs/architecture.md names', () => {
    const doc = readFileSync('docs/architecture.md', 'utf8')
    const rules = config.forbidden.map((r) => r.name)
    for (const name of rules) expect(doc, `docs/architecture.md names ${name}`).toContain(`\`${name}\``)
    expect(rules).toEqual(expect.arrayContaining(['domain-imports-outer-layer', 'front-door-imports-chain', 'runtime-imports-app', 'front-door-imports-infrastructure']))
  })

  it('src/http and src/mcp import nothing of src/chain at run time (the front doors reach the chain through the core), none excused', () => {
    expect(config.forbidden.map((r) => r.name)).toContain('front-door-imports-chain')
    expect([...violations, ...known].filter((v) => v.endsWith('(front-door-imports-chain)'))).toEqual([])
  })
})
