import { execFile, execFileSync } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/**
 * Whether pg_auto_failover's `pg_autoctl` is installed (`.ci/run` installs it): a file of the
 * pair's tests skips without it, and says so.
 */
export function autoctlInstalled(file: string): boolean {
  try {
    execFileSync('pg_autoctl', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    console.warn(`${file}: pg_autoctl is not installed (apt-get install postgresql-15-auto-failover); the pair tests are skipped`)
    return false
  }
}

/**
 * A pair of `scripts/dbpair.sh` in a directory of its own, on ports drawn from
 * `[portBase, portBase + portSpan)` (files running at once take ranges apart): `pair(...)` runs a
 * command of the script on it, `destroy()` stops it and removes the directory.
 */
export function scratchPair(name: string, portBase: number, portSpan: number) {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`))
  chmodSync(dir, 0o755) // run as root, the pair's processes run as the postgres OS user
  const env = { ...process.env, DBPAIR_TIMEOUT: '60', DBPAIR_DIR: join(dir, 'pair'), DBPAIR_PORT: String(portBase + Math.floor(Math.random() * portSpan)) }
  const pair = (...args: string[]) => run('bash', ['scripts/dbpair.sh', ...args], { env, timeout: 150_000 })
  return {
    dir,
    pair,
    async destroy() {
      await pair('destroy').catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
