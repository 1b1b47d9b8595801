import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

/** The documents whose file references are checked. */
const DOCS = ['README.md', ...readdirSync('docs').filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]

/** Folders of the repository: a reference starting with one of them is a repository path. */
const ROOTS = /^(src|test|bench|scripts|docs|contracts|clients|\.ci)\//
/** A relative path such as `txSender/send.ts`: a folder, then a source or document file name. */
const RELATIVE_FILE = /^[\w.-]+(\/[\w.*{},-]+)+\.(ts|cjs|mjs|js|md|sol|sh)$/
/** A relative folder such as `txSender/` (the trailing slash says it is one). */
const RELATIVE_DIR = /^[\w.-]+(\/[\w.-]+)*\/$/
/** A source file named alone, such as `actorStore.ts`. */
const SOURCE_FILE = /^[\w.-]+\.(ts|cjs|sol)$/

/**
 * Written by the service or CI, never committed (.gitignore): the docs name them as places to
 * look (the data directory, CI's report). Nothing else that is git-ignored counts as there.
 */
const GENERATED = ['.ci/out', '.data', '.test-data']

/**
 * Every file and folder (`folder/`) a clone of the repository has, relative to its root: git's
 * tracked and not-ignored files (what a commit would hold), never what a run left behind in
 * this working tree (ignored output such as a test's screenshots).
 */
function repositoryPaths(): string[] {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { encoding: 'utf8', maxBuffer: 64 << 20 })
    .split('\0').filter((f) => f && existsSync(f))
  const dirs = new Set(files.flatMap((f) => f.split('/').slice(0, -1).map((_, i, parts) => `${parts.slice(0, i + 1).join('/')}/`)))
  return [...files, ...dirs]
}
const PATHS = repositoryPaths()

/**
 * The repository paths a document names in backticks, with the line they are on. A span may be a
 * command (`node bench/sqlProbe.ts`), so each of its words is looked at; URL paths (`/api/v1/...`),
 * files of the data directory (`DATA_DIR/pg`, `chain/anvil.json`) and placeholders
 * (`src/domain/<feature>/`) are not repository paths and are left out.
 */
function referencedPaths(markdown: string): { path: string; line: number }[] {
  const found: { path: string; line: number }[] = []
  let fenced = false
  markdown.split('\n').forEach((text, i) => {
    if (/^\s*```/.test(text)) fenced = !fenced
    if (fenced) return
    for (const [, span] of text.matchAll(/`([^`]+)`/g)) {
      for (const word of span!.split(/\s+/)) {
        const path = word
          .replace(/^.*=/, '') // VAR=path, --flag=path
          .replace(/^["'(]+|["'),;]+$/g, '')
          .replace(/^\.\//, '')
          .replace(/[#:].*$/, '') // file.md#anchor, file.ts:31
        if (/[<>]|\.\.\./.test(path)) continue
        if (ROOTS.test(path) || RELATIVE_FILE.test(path) || RELATIVE_DIR.test(path) || SOURCE_FILE.test(path)) found.push({ path, line: i + 1 })
      }
    }
  })
  return found
}

/** `a/{b,c}.ts` -> `a/b.ts`, `a/c.ts`. */
function expandBraces(path: string): string[] {
  const m = /\{([^{}]*)\}/.exec(path)
  if (!m) return [path]
  return m[1]!.split(',').flatMap((alt) => expandBraces(path.slice(0, m.index) + alt + path.slice(m.index + m[0].length)))
}

/**
 * Whether a referenced path exists: a rooted one from the repository root, a relative one (or a
 * file named alone) as the end of some path in it. `*` matches within one path segment.
 */
function exists(path: string): boolean {
  return expandBraces(path).every((p) => {
    const bare = p.replace(/\/$/, '')
    if (GENERATED.some((g) => bare === g || bare.startsWith(`${g}/`))) return true
    // A reference ending in `/` names a folder; one without may name either.
    const pattern = bare.replace(/[.+?^$()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*') + (p.endsWith('/') ? '/' : '/?')
    const re = new RegExp(ROOTS.test(p) ? `^${pattern}$` : `(^|/)${pattern}$`)
    return PATHS.some((f) => re.test(f))
  })
}

describe('file references in the docs', () => {
  it('finds the repository paths a document names, and no URL or data-directory path', () => {
    const md = [
      'See `src/app/core.ts`, `node bench/sqlProbe.ts`, `txSender/send.ts`, `indexer/` and `actorStore.ts`.',
      '`POST /api/v1/agents/:id/start`, `DATA_DIR/pg`, `chain/anvil.json`, `src/domain/<feature>/`',
      '`BENCH_SERVICE_NODE_ARGS="--import ./bench/experiments/namedStatements.ts" npm run bench`',
      '```',
      'src/in/a/fence.ts',
      '```',
      '`docs/api.md#errors`, `src/http/routes/swap.routes.ts:31`',
    ].join('\n')
    expect(referencedPaths(md)).toEqual([
      { path: 'src/app/core.ts', line: 1 },
      { path: 'bench/sqlProbe.ts', line: 1 },
      { path: 'txSender/send.ts', line: 1 },
      { path: 'indexer/', line: 1 },
      { path: 'actorStore.ts', line: 1 },
      { path: 'bench/experiments/namedStatements.ts', line: 3 },
      { path: 'docs/api.md', line: 7 },
      { path: 'src/http/routes/swap.routes.ts', line: 7 },
    ])
  })

  it('knows a path from its root, its end, a glob or braces, and refuses one that is not there', () => {
    expect(['src/actors/runtime/', 'txSender/send.ts', 'contracts/*.sol', 'src/http/middleware/{auth,errors}.ts', 'effectOutcome.ts'].filter((p) => !exists(p))).toEqual([])
    expect(['src/db/swapAgents.ts', 'keys/', 'chain/walletOps.ts', 'src/http/middleware/{auth,nope}.ts', 'send.ts/'].filter(exists)).toEqual([])
  })

  it('counts what a clone has, not what a run left in this working tree: git-ignored output is not there', () => {
    // A log a run left (git-ignored by `*.log`): on disk here, in no clone.
    writeFileSync('test/docs-references-probe.log', '')
    try {
      expect(execFileSync('git', ['check-ignore', 'test/docs-references-probe.log'], { encoding: 'utf8' }).trim()).toBe('test/docs-references-probe.log')
      expect(repositoryPaths().filter((p) => p.includes('docs-references-probe'))).toEqual([])
      expect(['test/docs-references-probe.log', 'test/.screenshots/ops-console/', 'node_modules/vitest/package.json', 'coverage/'].filter(exists)).toEqual([])
    } finally {
      rmSync('test/docs-references-probe.log', { force: true })
    }
  })

  it('every path named in README.md and docs/*.md exists in the repository', () => {
    const missing = DOCS.flatMap((doc) =>
      referencedPaths(readFileSync(doc, 'utf8'))
        .filter(({ path }) => !exists(path))
        .map(({ path, line }) => `${doc}:${line}: ${path}`),
    )
    expect(missing, 'paths named in the docs that do not exist').toEqual([])
  })
})
