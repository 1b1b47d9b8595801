import { describe, expect, it } from 'vitest'
import { jsonSchemaProblem } from './jsonSchemaCheck.ts'

describe('jsonSchemaProblem', () => {
  it('accepts a draft 2020-12 schema with local refs, unknown keywords and data that mentions URLs', () => {
    expect(jsonSchemaProblem({ $defs: { n: { type: 'integer' } }, type: 'object', properties: { a: { $ref: '#/$defs/n' } }, 'x-ui': 1 })).toBeUndefined()
    expect(jsonSchemaProblem({ const: { $ref: 'https://example.com' }, examples: ['https://x'] })).toBeUndefined()
    expect(jsonSchemaProblem({ properties: { pattern: { type: 'string' } }, patternProperties: { '^x-': {} } })).toBeUndefined()
  })

  it('names what is wrong: the meta-schema, a remote ref, a bad pattern, too deep', () => {
    expect(jsonSchemaProblem({ type: 'strnig' })).toMatch(/^\/type /)
    expect(jsonSchemaProblem({ items: { $ref: 'http://169.254.169.254/' } })).toMatch(/^\/items\/\$ref must refer inside/)
    expect(jsonSchemaProblem({ patternProperties: { '(': {} } })).toMatch(/not a valid regular expression/)
    let deep: object = { type: 'string' }
    for (let i = 0; i < 40; i++) deep = { items: deep }
    expect(jsonSchemaProblem(deep)).toMatch(/deeper than 32/)
  })
})
