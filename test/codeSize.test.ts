import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from '@babel/parser'
import { describe, expect, it } from 'vitest'

const MAX_FILE_LINES = 400
const MAX_FUNCTION_LINES = 120
/** Exempt: generated contract artifacts, and migrations (immutable once applied anywhere). */
const EXEMPT = /^src\/(dev\/artifacts|adapters\/db\/migrations)\//

const FUNCTION_NODES = new Set([
  'FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression', 'ClassMethod', 'ClassPrivateMethod', 'ObjectMethod',
])

type Node = { type?: string; loc?: { start: { line: number }; end: { line: number } }; [k: string]: unknown }

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath, e.name))
    .filter((p) => !EXEMPT.test(p))
}

/** The name a function is known by: its own, its key, or the variable it is assigned to. */
function nameOf(node: Node, parent: Node | undefined): string {
  const id = (node.id ?? node.key ?? (parent?.type === 'VariableDeclarator' ? parent.id : parent?.key)) as Node | undefined
  return typeof id?.name === 'string' ? id.name : '(anonymous)'
}

/** Every function in a file with its length in lines. */
function functionLengths(path: string): { name: string; lines: number }[] {
  const found: { name: string; lines: number }[] = []
  const visit = (node: unknown, parent: Node | undefined): void => {
    if (Array.isArray(node)) return node.forEach((n) => visit(n, parent))
    if (!node || typeof node !== 'object') return
    const n = node as Node
    if (n.type && FUNCTION_NODES.has(n.type) && n.loc) {
      found.push({ name: nameOf(n, parent), lines: n.loc.end.line - n.loc.start.line + 1 })
    }
    for (const [k, v] of Object.entries(n)) if (k !== 'loc' && v && typeof v === 'object') visit(v, n)
  }
  visit(parse(readFileSync(path, 'utf8'), { sourceType: 'module', plugins: ['typescript'] }).program, undefined)
  return found
}

/**
 * Size limits for hand-written source: no file over 400 lines, no function over 120 (a file's functions are
 * named `path name()`). Files and functions that were over when the check was added are listed in test/codeSize.known.json with
 * their size then; the list only shrinks: a listed one may not grow, a new one fails, and one
 * that is now within the limit must be taken off the list.
 */
describe('code size', () => {
  const known = JSON.parse(readFileSync('test/codeSize.known.json', 'utf8')) as Record<string, number>
  const over: Record<string, number> = {}
  for (const path of sourceFiles('src')) {
    const text = readFileSync(path, 'utf8')
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
    if (lines > MAX_FILE_LINES) over[path] = lines
    for (const f of functionLengths(path)) if (f.lines > MAX_FUNCTION_LINES) over[`${path} ${f.name}()`] = f.lines
  }

  it(`no file over ${MAX_FILE_LINES} lines and no function over ${MAX_FUNCTION_LINES}, beyond the listed ones`, () => {
    expect(Object.keys(over).filter((k) => !(k in known)), 'new').toEqual([])
    expect(Object.keys(known).filter((k) => k in over && over[k]! > known[k]!), 'grew').toEqual([])
    expect(Object.keys(known).filter((k) => !(k in over)), 'now within the limits: remove from test/codeSize.known.json').toEqual([])
  })
})
