import fc from 'fast-check'

/** The parts of a JSON Schema (as the service's OpenAPI document writes them) that generation reads. */
export type JsonSchema = {
  type?: string | string[]
  format?: string
  pattern?: string
  enum?: unknown[]
  const?: unknown
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  items?: JsonSchema
  maxItems?: number
  properties?: Record<string, JsonSchema>
  required?: string[]
  default?: unknown
}

/** One operation of the document, flattened for fuzzing. */
export type Operation = {
  method: string
  /** Template with `{name}` path parameters, e.g. `/agents/{id}`. */
  path: string
  /** `/api/v1`, or `` for an operation served at the root (e.g. /metrics). */
  base: string
  scope: string | undefined
  pathParams: string[]
  query: Record<string, JsonSchema>
  headers: Record<string, JsonSchema>
  body: JsonSchema | undefined
}

/** Every operation of an OpenAPI 3.1 document. */
export function operationsOf(doc: { servers: Array<{ url: string }>; paths: Record<string, Record<string, any>> }): Operation[] {
  const out: Operation[] = []
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const params: Array<{ name: string; in: string; schema: JsonSchema }> = op.parameters ?? []
      const base = (op.servers ?? doc.servers)[0].url.replace(/\/$/, '')
      out.push({
        method: method.toUpperCase(),
        path,
        base,
        scope: op['x-scope'],
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: Object.fromEntries(params.filter((p) => p.in === 'query').map((p) => [p.name, p.schema])),
        headers: Object.fromEntries(params.filter((p) => p.in === 'header').map((p) => [p.name, p.schema])),
        body: op.requestBody?.content?.['application/json']?.schema,
      })
    }
  }
  return out
}

/** Values a real client sends for strings whose pattern cannot be generated. */
const PLAUSIBLE = ['ETH', 'WETH', 'USDC', 'TSLAx', '0.01', '1', '100', 'venue-a', 'gpt-4o-mini', 'trading', `0x${'ab'.repeat(20)}`]

function stringOf(s: JsonSchema, known: { uuids: string[] }): fc.Arbitrary<string> {
  if (s.format === 'uuid') return fc.oneof(fc.uuid(), fc.constantFrom(...known.uuids))
  if (s.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString())
  // fc.webUrl takes seconds to build; a few shapes of URL do here.
  if (s.format === 'uri') return fc.oneof(fc.constantFrom('https://example.com/logo.png', 'http://x', 'ftp://a/b', 'https://'), fc.string({ maxLength: 40 }).map((p) => `https://example.com/${encodeURIComponent(p)}`))
  const maxLength = Math.min(s.maxLength ?? 40, 80)
  const plain = fc.string({ minLength: s.minLength ?? 0, maxLength, unit: 'grapheme' })
  if (s.pattern) {
    try {
      return fc.oneof(fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length <= (s.maxLength ?? Infinity)), fc.constantFrom(...PLAUSIBLE), plain)
    } catch {
      // A pattern fast-check cannot generate from: plausible values and plain strings.
    }
  }
  return fc.oneof(fc.constantFrom(...PLAUSIBLE), plain)
}

/**
 * Values that mostly follow `schema` (so that requests get past the first checks and reach the
 * code behind them), built from its JSON Schema: types, formats, patterns, bounds, enums,
 * required and optional properties.
 */
export function valueOf(schema: JsonSchema | undefined, known: { uuids: string[] }, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.jsonValue({ maxDepth: 2 })
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (schema.enum) return fc.constantFrom(...schema.enum)
  const branches = schema.anyOf ?? schema.oneOf
  if (branches) return fc.oneof(...branches.map((b) => valueOf(b, known, depth + 1)))
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((t) => valueOf({ ...schema, type: t }, known, depth + 1)))
  switch (schema.type) {
    case 'string':
      return stringOf(schema, known)
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 })
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9, noNaN: true })
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array':
      return fc.array(valueOf(schema.items, known, depth + 1), { maxLength: Math.min(schema.maxItems ?? 4, 4) })
    case 'object': {
      const props = schema.properties ?? {}
      const record = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, valueOf(v, known, depth + 1)]))
      return fc.record(record, { requiredKeys: (schema.required ?? []).filter((k) => k in props) })
    }
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

/** Field names that have broken parsers before: Object.prototype members and friends. */
export const NASTY_KEYS = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'prototype', '', ' ', 'a.b', '0', '\u0000']

/** Strings that have broken validators before: NUL, lone surrogates, emoji, numbers in disguise, huge. */
export const NASTY_STRINGS = [
  '\u0000', 'a\u0000b', '\ud800', '😀'.repeat(40), '👨‍👩‍👧'.repeat(10), '0x10', '1e2', '-1', '1.5', 'NaN', 'Infinity', ' 5', '+5',
  '9'.repeat(400), 'x'.repeat(5000), '../..', '%00', '%', "'; drop table agent; --", '${jndi:x}', 'true', 'null', '[]', '{}',
]

/** A cursor as the service encodes them (base64url of JSON), around dates PostgreSQL refuses. */
export const cursorArb = fc.oneof(
  fc.constantFrom('2026-02-30T00:00:00Z', '0000-01-01T00:00:00Z', '2025-02-29 00:00:00+00', '9999-12-31T23:59:59.999999999+15:59', '2026-13-01T00:00:00Z', '1'),
  fc.string({ maxLength: 30 }),
).chain((ts) =>
  fc.oneof(
    fc.tuple(fc.constant(ts), fc.uuid()).map((t) => Buffer.from(JSON.stringify(t)).toString('base64url')),
    fc.tuple(fc.integer(), fc.string({ maxLength: 50 })).map((t) => Buffer.from(JSON.stringify(t)).toString('base64url')),
    fc.constant(Buffer.from(ts).toString('base64url')),
    fc.string({ maxLength: 60 }),
  ),
)
