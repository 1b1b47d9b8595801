import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/logger.ts'
import { createServices, type Services } from '../src/app/services.ts'
import { freePort } from '../src/dev/embeddedPostgres.ts'
import { listNodes } from '../src/actors/runtime/shardLease.store.ts'
import { createTestDatabase } from './support/db.ts'
import { waitFor } from './support/waitFor.ts'

const logger = createLogger({ level: 'silent' })
let database: { url: string; drop(): Promise<void> }
let dataDir: string
const opened: Services[] = []

beforeAll(async () => {
  database = await createTestDatabase()
  dataDir = mkdtempSync(join(tmpdir(), 'datadir-'))
})
afterAll(async () => {
  for (const s of opened) await s.close()
  await database?.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

const config = (extra: Record<string, string> = {}) =>
  loadConfig({ DATABASE_URL: database.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', SHARD_LEASE_SECONDS: '0.6', ...extra })

/** `node src/main.ts` on the same data directory (its embedded chain); resolves with its exit code and output. */
async function runMain(): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: { ...process.env, DATABASE_URL: database.url, DATA_DIR: dataDir, PORT: String(await freePort()), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (d) => (output += d))
  child.stderr.on('data', (d) => (output += d))
  const code = await new Promise<number | null>((r) => child.once('exit', r))
  return { code, output }
}

describe('nodes and the data directory', () => {
  it('processes on one database join as nodes and split the shards', async () => {
    const a = await createServices(config(), logger, { withChain: false })
    const b = await createServices(config(), logger, { withChain: false })
    opened.push(a, b)
    await a.start()
    await b.start()
    await waitFor(async () => {
      const live = (await listNodes(a.pool)).filter((n) => n.status === 'active')
      return live.length === 2 && live.every((n) => n.shards.length === 32)
    })
    await b.close()
    opened.pop()
    // A clean stop hands the shards back at once.
    await waitFor(async () => (await listNodes(a.pool)).find((n) => n.status === 'active')?.shards.length === 64)
    await a.close()
    opened.pop()
  })

  it('the process that runs the embedded chain of a data directory keeps it to itself, with a clear message', async () => {
    const owner = await createServices(config(), logger, { withChain: true })
    opened.push(owner)
    await expect(createServices(config(), logger, { withChain: true })).rejects.toMatchObject({
      code: 'database_in_use',
      message: expect.stringContaining('Another service process runs the embedded Postgres or chain of this data directory'),
    })
    const second = await runMain()
    expect(second.code).toBe(1)
    expect(second.output).toContain('fatal: Another service process runs the embedded Postgres or chain of this data directory')
    expect(second.output).toContain('WORKERS=N')
    expect(second.output).not.toContain('listening')
    expect(second.output).not.toMatch(/\n\s+at /) // a message, not a stack trace
    // Once it has stopped, the data directory is free again.
    await owner.close()
    opened.pop()
    const next = await createServices(config(), logger, { withChain: true })
    opened.push(next)
    expect((await next.pool.query('select 1 as ok')).rows[0].ok).toBe(1)
  })
})
