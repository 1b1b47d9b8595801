import { spawn } from 'node:child_process'
import { existsSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import pg from 'pg'
import { kill9, serverCleanup, startServer } from './support/server.ts'

const { servers, cleanups } = serverCleanup()

/** `npm run -s admin -- <args>` as a process: its exit code and what it printed on each stream. */
function admin(env: Record<string, string>, args: string[]) {
  const child = spawn(process.execPath, ['scripts/admin.ts', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return { exited, out: () => stdout, err: () => stderr }
}

describe('the admin CLI on the embedded Postgres', () => {
  it('waits for a Postgres that is shutting down to finish (never "the database system is shutting down"), then does its work on its own', { timeout: 180_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'alts-admin-'))
    cleanups.push(() => {
      // As root the cluster lives behind a symlink (see clusterDir); remove its target too.
      const link = join(dataDir, 'pg')
      if (lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) rmSync(dirname(readlinkSync(link)), { recursive: true, force: true })
      rmSync(dataDir, { recursive: true, force: true })
    })
    const env = { DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', LOG_LEVEL: 'info' }
    const server = await startServer(env)
    servers.push(server)
    const pidFile = join(dataDir, 'pg', 'postmaster.pid')
    const [pid, , , port] = readFileSync(pidFile, 'utf8').split('\n').map((l) => l.trim())
    // A session of our own holds the Postgres in its shutdown: a smart shutdown (SIGTERM) waits
    // for the sessions to end and refuses new ones meanwhile, as during any service's stop.
    const held = new pg.Client({ host: '127.0.0.1', port: Number(port), user: 'postgres', password: 'postgres', database: 'app' })
    held.on('error', () => {}) // the cleanup may end the Postgres under it after a failure
    await held.connect()
    await kill9(server, { group: false })
    process.kill(Number(pid), 'SIGTERM')
    await expect.poll(() => readFileSync(pidFile, 'utf8').split('\n')[7]?.trim(), { timeout: 10_000 }).toBe('stopping')
    const refused = new pg.Client({ host: '127.0.0.1', port: Number(port), user: 'postgres', password: 'postgres', database: 'app' })
    await expect(refused.connect()).rejects.toThrow(/shutting down/)

    const cli = admin(env, ['create-account', '--name', 'after-stop'])
    // The CLI says it waits (on stderr), and does not exit while the Postgres is still stopping.
    await expect.poll(() => cli.err(), { timeout: 60_000 }).toContain('waiting for the embedded Postgres')
    expect(await Promise.race([cli.exited, new Promise((r) => setTimeout(() => r('running'), 500))])).toBe('running')
    await held.end()

    expect(await cli.exited, cli.err()).toBe(0)
    const lines = cli.out().trim().split('\n')
    expect(lines).toHaveLength(1)
    const made = JSON.parse(lines[0]!) as { accountId: string; apiKey: string }
    expect(made.apiKey).toMatch(/^cpk_/)
    // It started its own Postgres for the command and stopped it; the account is in the database.
    expect(existsSync(pidFile)).toBe(false)
    const grant = admin(env, ['grant-credits', '--account', made.accountId, '--credits', '5'])
    expect(await grant.exited, grant.err()).toBe(0)
    expect(JSON.parse(grant.out().trim())).toMatchObject({ accountId: made.accountId, created: true })
  })
})
