import { readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { dirname, join, normalize } from 'node:path'

/** One import of a source file: what it names, resolved to a file of src/ when relative, and whether it is for types only. */
export type ImportEdge = { from: string; specifier: string; to: string | null; typeOnly: boolean }

// `import … from '…'`, `import '…'`, `export … from '…'`, over several lines; `import type` / `export type` marked.
const IMPORT = /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/g

/**
 * Every static import and re-export of the source files of src/ (tests left out), types
 * included: what TypeScript reads, not only what Node loads.
 */
export function importGraph(root = process.cwd()): ImportEdge[] {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'src/**/*.ts'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f && !f.endsWith('.test.ts'))
  const known = new Set(files)
  const edges: ImportEdge[] = []
  for (const from of files) {
    const text = readFileSync(join(root, from), 'utf8')
    for (const m of text.matchAll(IMPORT)) {
      const specifier = m[3]!
      let to: string | null = null
      if (specifier.startsWith('.')) {
        const path = normalize(join(dirname(from), specifier))
        to = known.has(path) ? path : null
      }
      edges.push({ from, specifier, to, typeOnly: m[2] !== undefined })
    }
  }
  return edges
}

/** The import circles among `edges` (each a strongly connected set of two or more files, sorted). */
export function importCircles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>()
  for (const e of edges) if (e.to) next.set(e.from, [...(next.get(e.from) ?? []), e.to])
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const circles: string[][] = []
  const visit = (v: string) => {
    index.set(v, counter)
    low.set(v, counter++)
    stack.push(v)
    onStack.add(v)
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const circle: string[] = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      circle.push(w)
    } while (w !== v)
    if (circle.length > 1) circles.push(circle.sort())
  }
  for (const v of next.keys()) if (!index.has(v)) visit(v)
  return circles
}
