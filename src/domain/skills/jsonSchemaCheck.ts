import { Ajv2020 } from 'ajv/dist/2020.js'

// One validator for the meta-schema only, built on first use (it compiles the meta-schemas): a
// custom skill's schema is checked against JSON Schema draft 2020-12, never compiled into code
// (Ajv treats a compiled schema as trusted code; ours come from any account). Nothing is fetched:
// a `$ref` must point inside the document.
let ajv: Ajv2020 | undefined

const MAX_DEPTH = 32
/** Keywords whose values are instance data, not schemas: a `$ref` string in them refers to nothing. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples'])

/**
 * Why `schema` is not an acceptable JSON Schema, or undefined when it is: it must pass the draft
 * 2020-12 meta-schema, nest at most 32 levels, refer only inside itself (`$ref: "#..."`), and its
 * `pattern` / `patternProperties` must be valid regular expressions.
 *
 * @example
 * jsonSchemaProblem({ type: 'object', properties: { n: { type: 'integer' } } }) // undefined
 * jsonSchemaProblem({ type: 'strnig' }) // '/type must be equal to one of the allowed values'
 */
export function jsonSchemaProblem(schema: unknown): string | undefined {
  const walked = walk(schema, '', 0)
  if (walked) return walked
  const validator = (ajv ??= new Ajv2020({ allErrors: false, validateFormats: false, logger: false }))
  if (validator.validateSchema(schema as object)) return undefined
  const first = validator.errors?.[0]
  return first ? `${first.instancePath || '/'} ${first.message ?? 'is invalid'}` : 'does not match the JSON Schema meta-schema'
}

function walk(node: unknown, path: string, depth: number): string | undefined {
  if (depth > MAX_DEPTH) return `nests deeper than ${MAX_DEPTH} levels`
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const p = walk(node[i], `${path}/${i}`, depth + 1)
      if (p) return p
    }
    return undefined
  }
  if (node === null || typeof node !== 'object') return undefined
  for (const [key, value] of Object.entries(node)) {
    const at = `${path}/${key}`
    if (DATA_KEYWORDS.has(key)) continue
    if ((key === '$ref' || key === '$dynamicRef') && typeof value === 'string' && !value.startsWith('#')) {
      return `${at} must refer inside the schema ("#/..."); nothing is fetched`
    }
    if (key === 'pattern' && typeof value === 'string' && !isRegExp(value)) return `${at} is not a valid regular expression`
    if (key === 'patternProperties' && value && typeof value === 'object') {
      const bad = Object.keys(value).find((k) => !isRegExp(k))
      if (bad !== undefined) return `${at} has a key that is not a valid regular expression`
    }
    const p = walk(value, at, depth + 1)
    if (p) return p
  }
  return undefined
}

function isRegExp(source: string): boolean {
  try {
    new RegExp(source, 'u')
    return true
  } catch {
    return false
  }
}
