import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from '@babel/parser'
import { describe, expect, it } from 'vitest'

/**
 * SQL in stores only: SQL text lives under src/adapters/db, in the runtime's store, the embedded Postgres, the tx
 * sender and the indexer. Elsewhere, code reads and writes the database through those stores.
 */
const ALLOWED = [
  /^src\/adapters\/db\//,
  /^src\/runtime\/(actorStore|effectStore|scheduleStore|actorJournal\.store|shardLease\.store|nodeBus)\.ts$/,
  /^src\/dev\/embeddedPostgres\.ts$/,
  /^src\/adapters\/chain\/txSender(\/|\.ts$)/,
  /^src\/adapters\/chain\/indexer(\/|\.ts$)/,
]

/**
 * Files outside the allowed places that still hold SQL, each with a one-line reason. The list can
 * only shrink: a listed file that no longer holds SQL fails the check (take it off the list).
 */
const KNOWN_EXCEPTIONS: Array<{ path: string; reason: string }> = []

/** A statement's start in a string or template literal (comments are never looked at). */
const SQL = [
  /\bselect\s[\s\S]*?\bfrom\b/i,
  /\binsert\s+into\b/i,
  /\bupdate\s+[a-z_."]+\s+set\b/i,
  /\bdelete\s+from\b/i,
  /\bwith\s+[a-z_]+\s+as\s*\(/i,
  /\bpg_advisory/i,
]

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath, e.name))
}

/** The text of every string and template literal of a file (a template's holes read as `x`), comments left out. */
function literals(path: string): string[] {
  const ast = parse(readFileSync(path, 'utf8'), { sourceType: 'module', plugins: ['typescript'] })
  const found: string[] = []
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit)
    if (!node || typeof node !== 'object') return
    const n = node as { type?: string; value?: unknown; quasis?: Array<{ value: { cooked?: string | null; raw: string } }> }
    if (n.type === 'StringLiteral' && typeof n.value === 'string') found.push(n.value)
    if (n.type === 'TemplateLiteral' && n.quasis) found.push(n.quasis.map((q) => q.value.cooked ?? q.value.raw).join('x'))
    for (const [k, v] of Object.entries(n)) {
      if (k !== 'loc' && k !== 'comments' && k !== 'leadingComments' && k !== 'trailingComments' && k !== 'innerComments' && v && typeof v === 'object') visit(v)
    }
  }
  visit(ast.program)
  return found
}

const holdsSql = (path: string) => literals(path).some((text) => SQL.some((re) => re.test(text)))

describe('SQL placement', () => {
  const files = sourceFiles('src')
  const withSql = files.filter(holdsSql)

  it('scans the sources and finds the stores', () => {
    expect(files.length).toBeGreaterThan(100)
    expect(withSql).toContain(join('src', 'adapters', 'db', 'idempotency.store.ts'))
  })

  it('no SQL outside src/adapters/db, the runtime store, the tx sender and the indexer, beyond the known exceptions', () => {
    const outside = withSql.filter((p) => !ALLOWED.some((re) => re.test(p)))
    const known = new Set(KNOWN_EXCEPTIONS.map((e) => e.path))
    expect(outside.filter((p) => !known.has(p)), 'SQL outside the stores: move it to a store under src/adapters/db').toEqual([])
    expect([...known].filter((p) => !outside.includes(p)), 'no longer holds SQL: take it off KNOWN_EXCEPTIONS').toEqual([])
  })
})
