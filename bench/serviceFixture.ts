import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { adminCreateAccount, startServer, stopServer } from '../test/support/server.ts'
import { apiClient, type Api } from '../test/support/app.ts'

/**
 * Runs `fn` against the real service in a child process (embedded anvil, a fresh database on the
 * machine's Postgres or DATABASE_URL, rate limits out of the way) with one account's key, and
 * cleans everything up afterwards, even on failure.
 */
export async function withService(
  name: string,
  fn: (s: { url: string; apiKey: string; api: Api; pid: number | undefined; databaseUrl: string; logs(): string; newAccountApi(): Promise<Api> }) => Promise<void>,
  extraEnv: Record<string, string> = {},
  /** `cwd`: another checkout's service (and admin CLI) instead of this one's: a baseline tree. */
  { cwd }: { cwd?: string } = {},
): Promise<void> {
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
  const dbName = `bench_${name}_${Date.now()}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`create database ${dbName}`)
  const url = new URL(adminUrl)
  url.pathname = `/${dbName}`
  const dataDir = mkdtempSync(join(tmpdir(), `bench-${name}-`))
  const env = { DATABASE_URL: url.toString(), DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_PER_KEY: '100000000', ...extraEnv }
  // BENCH_SERVICE_NODE_ARGS: extra node flags for the service, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  const server = await startServer(env, { nodeArgs: (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean), ...(cwd ? { cwd } : {}) })
  try {
    const { apiKey } = await adminCreateAccount(env, [], cwd ? { cwd } : {})
    // Another account (the admin CLI, as an operator would make one), answered as a client with its key.
    const newAccountApi = async () => apiClient(`${server.url}/api/v1`, (await adminCreateAccount(env, [], cwd ? { cwd } : {})).apiKey)
    await fn({ url: server.url, apiKey, api: apiClient(`${server.url}/api/v1`, apiKey), pid: server.child.pid, databaseUrl: url.toString(), logs: server.logs, newAccountApi })
  } finally {
    await stopServer(server)
    await admin.query(`drop database if exists ${dbName} with (force)`)
    await admin.end()
    rmSync(dataDir, { recursive: true, force: true })
  }
}
