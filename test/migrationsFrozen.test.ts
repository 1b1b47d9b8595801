import { createHash } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { RUNTIME_MIGRATIONS } from '../src/actors/runtime/schema/migrate.ts'

/**
 * A migration applied somewhere is never edited: a database records its name, not its text, so an
 * edit would leave databases migrated before it in another shape than those migrated after. Each
 * migration's text is pinned by its SHA-256 in test/fixtures/migrationHashes.json: the service's
 * by its file, the runtime's by the SQL it runs. A new migration is added to the list (the test
 * says which); a changed one fails: write a new migration instead.
 */
const DIR = 'src/adapters/db/migrations'
const sha = (text: string) => createHash('sha256').update(text).digest('hex')
const pinned = JSON.parse(readFileSync('test/fixtures/migrationHashes.json', 'utf8')) as Record<string, string>

function current(): Record<string, string> {
  const service = readdirSync(DIR).filter((f) => /^Migration\d+_\w+\.ts$/.test(f)).map((f) => [f.replace(/\.ts$/, ''), sha(readFileSync(`${DIR}/${f}`, 'utf8'))])
  const runtime = RUNTIME_MIGRATIONS.map((m) => [m.name, sha(m.sql)])
  return Object.fromEntries([...service, ...runtime].sort(([a], [b]) => a!.localeCompare(b!)))
}

describe('applied migrations', () => {
  it('are unchanged: each one\'s text has the hash pinned when it was added', () => {
    const now = current()
    const changed = Object.keys(pinned).filter((name) => name in now && now[name] !== pinned[name])
    expect(changed, 'an applied migration changed: put the change in a new migration').toEqual([])
    const gone = Object.keys(pinned).filter((name) => !(name in now))
    expect(gone, 'an applied migration was removed').toEqual([])
    const added = Object.keys(now).filter((name) => !(name in pinned))
    expect(added.map((name) => `"${name}": "${now[name]}"`), 'a new migration: add these lines to test/fixtures/migrationHashes.json').toEqual([])
  })
})
