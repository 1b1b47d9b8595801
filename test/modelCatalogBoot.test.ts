import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const dir = mkdtempSync(join(tmpdir(), 'catalog-boot-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const model = (id: string) => ({ id, name: id, providerModel: id, inputCreditsPerMillion: 1, outputCreditsPerMillion: 1, contextWindow: 1000, supportsTools: true, default: true })

describe('boot with a bad model catalog', () => {
  it.each([
    ['MODEL_CATALOG', 'two-defaults.json', { models: [model('a'), model('b')] }, /exactly one model must have "default": true \(found 2: a, b\)/],
    ['MODELS_FILE', 'no-default.json', { models: [{ ...model('a'), default: false }] }, /found 0/],
  ])('%s=%s stops the boot with an error naming the file, before anything starts', async (variable, name, content, problem) => {
    const path = join(dir, name)
    writeFileSync(path, JSON.stringify(content))
    // An unreachable database: the catalog is checked before any connection is tried.
    const env = { ...process.env, [variable]: path, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent', PORT: '0' }
    const err = await run(process.execPath, ['src/main.ts'], { env, timeout: 30_000 }).catch((e) => e)
    expect(err.code).toBe(1)
    expect(err.stderr).toContain(`Invalid model catalog ${path}`)
    expect(err.stderr).toMatch(problem)
  })
})
