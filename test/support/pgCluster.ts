import { execFile, execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort } from '../../src/dev/embeddedPostgres.ts'

const run = promisify(execFile)

/** The newest Postgres server binaries of the machine (Debian's layout), or undefined. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl'))).sort((a, b) => Number(b) - Number(a))
  return versions[0] && join(root, versions[0], 'bin')
}

/**
 * A Postgres cluster of the test's own (initdb, pg_ctl) on a spare port, that the test stops and
 * starts again as it likes: the database that goes down under the service. Run as root, it runs
 * as the postgres OS user (Postgres refuses root).
 *
 * @example
 * const pg = await startPgCluster()
 * await pg.stop(); await pg.start(); await pg.destroy()
 */
export async function startPgCluster() {
  const bin = postgresBinDir()
  if (!bin) throw new Error('no Postgres server binaries under /usr/lib/postgresql')
  const dir = mkdtempSync(join(tmpdir(), 'pgcluster-'))
  chmodSync(dir, 0o777)
  const data = join(dir, 'data')
  const root = process.getuid?.() === 0
  const as = (cmd: string, args: string[]) => (root ? run('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]) : run(join(bin, cmd), args))
  await as('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'])
  const port = await freePort()
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`
  const start = async () => void (await as('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', 'start']))
  await start()
  await run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-qc', 'create database app'])
  return {
    url: `postgres://postgres@127.0.0.1:${port}/app`,
    port,
    start,
    /** `immediate`: the server's processes end at once, as if the machine had lost power (crash recovery on start). */
    stop: async (mode: 'fast' | 'immediate' = 'immediate') => void (await as('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop'])),
    async destroy() {
      try {
        execFileSync(root ? 'runuser' : join(bin, 'pg_ctl'), root ? ['-u', 'postgres', '--', join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop'] : ['-D', data, '-m', 'immediate', 'stop'], { stdio: 'ignore' })
      } catch {}
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
export type PgCluster = Awaited<ReturnType<typeof startPgCluster>>
