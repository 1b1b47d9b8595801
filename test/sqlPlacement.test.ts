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
  /^src\/actors\/runtime\/(actorStore|effectStore|scheduleStore|actorJournal\.store|actorInsert\.store|shardLease\.store|nodeBus|inspect\.store|inspectTimeline\.store|inspectCounts\.store|admin\.store|read\.store|compaction\.store|sqlApi)\.ts$/,
  /^src\/actors\/runtime\/schema\//,
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

/** The runtime's tables (src/actors/runtime): only the runtime's own store reads or writes them. */
const RUNTIME_TABLES = ['actor', 'actor_count', 'actor_count_delta', 'actor_inbox', 'actor_journal', 'actor_status_hook', 'actor_timer', 'effect', 'role_lease', 'runtime_schema_migration', 'service_node', 'shard_lease']
const NAMES_RUNTIME_TABLE = new RegExp(`\\b(?:from|join|into|update|table|on)\\s+(?:${RUNTIME_TABLES.join('|')})\\b`, 'i')

/**
 * Files outside src/actors/runtime whose SQL still names a runtime table, each with what it reads or
 * writes there: what it needs is to become runtime API (a read model, an event sent in the
 * caller's transaction, an SQL fragment of src/actors/runtime/sqlApi.ts composed into its statement,
 * the DDL of src/actors/runtime/schema/ for an index or a status hook). None is left: the runtime's
 * tables are made by its own migrations (src/actors/runtime/schema/), and what the service writes on an
 * actor's status change runs as the runtime's status hooks. The list can only shrink: a new file
 * fails, and so does a listed file that no longer names one.
 */
const RUNTIME_TABLE_READERS: Array<{ path: string; reason: string }> = ([] as Array<{ path: string; reason: string }>).map((e) => ({ ...e, path: join(...e.path.split('/')) }))

describe('the runtime\'s tables', () => {
  const outside = sourceFiles('src').filter((p) => !p.startsWith(join('src', 'actors', 'runtime')) && literals(p).some((text) => NAMES_RUNTIME_TABLE.test(text)))

  it('are named by no SQL outside src/actors/runtime beyond the listed readers', () => {
    const known = new Set(RUNTIME_TABLE_READERS.map((e) => e.path))
    expect(outside.filter((p) => !known.has(p)), 'SQL naming a runtime table outside src/actors/runtime: ask the runtime instead').toEqual([])
    expect([...known].filter((p) => !outside.includes(p)), 'no longer names a runtime table: take it off RUNTIME_TABLE_READERS').toEqual([])
  })

  it('the check sees a runtime table where one is named', () => {
    expect(NAMES_RUNTIME_TABLE.test('insert into actor_inbox (actor_id) values ($1)')).toBe(true)
    expect(NAMES_RUNTIME_TABLE.test('select a.id from actor a join agent g on g.id = a.id')).toBe(true)
    expect(NAMES_RUNTIME_TABLE.test('select id from agent where actor_id = $1')).toBe(false)
  })
})
