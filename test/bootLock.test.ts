import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/logger.ts'
import { createServices, type Services } from '../src/services.ts'
import { freePort } from '../src/db/embeddedPostgres.ts'
import { createTestDatabase } from './support/db.ts'

const logger = createLogger({ level: 'silent' })
let database: { url: string; drop(): Promise<void> }
let dataDir: string
const opened: Services[] = []

beforeAll(async () => {
  database = await createTestDatabase()
  dataDir = mkdtempSync(join(tmpdir(), 'bootlock-'))
})
afterAll(async () => {
  for (const s of opened) await s.close()
  await database?.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

const config = () => loadConfig({ DATABASE_URL: database.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0' })

/** `node src/main.ts` against the database; resolves with its exit code and output. */
async function runMain(): Promise<{ code: number | null; output: string; ms: number }> {
  const t0 = Date.now()
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: { ...process.env, DATABASE_URL: database.url, DATA_DIR: dataDir, PORT: String(await freePort()), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (d) => (output += d))
  child.stderr.on('data', (d) => (output += d))
  const code = await new Promise<number | null>((r) => child.once('exit', r))
  return { code, output, ms: Date.now() - t0 }
}

describe('the boot lock', () => {
  it('a second process against the same database refuses to start, with a clear message', async () => {
    const first = await createServices(config(), logger, { withChain: false })
    opened.push(first)

    await expect(createServices(config(), logger, { withChain: false })).rejects.toMatchObject({
      code: 'database_in_use',
      message: expect.stringContaining('Another service process is already running against this database'),
    })

    const second = await runMain()
    expect(second.code).toBe(1)
    expect(second.output).toContain('fatal: Another service process is already running against this database')
    expect(second.output).not.toContain('listening')
    expect(second.output).not.toMatch(/\n\s+at /) // a message, not a stack trace

    // Processes that share a database on purpose say so.
    const shared = await createServices(config(), logger, { withChain: false, sharedDatabase: true })
    await shared.close()

    // Once the first has stopped, the lock is free again.
    await first.close()
    opened.pop()
    const next = await createServices(config(), logger, { withChain: false })
    opened.push(next)
    expect((await next.pool.query('select 1 as ok')).rows[0].ok).toBe(1)
  })
})
