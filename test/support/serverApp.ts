import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { createPublicClient, http, type PublicClient } from 'viem'
import { readManifest, type DeploymentManifest } from '../../src/adapters/chain/manifest.ts'
import { apiClient, type Api } from './app.ts'
import { createTestDatabase } from './db.ts'
import { adminCreateAccount, killServerHard, startServer, stopServer, type ServerProcess } from './server.ts'

export type ServerApp = {
  server: ServerProcess
  /** The environment the server was started with (DATABASE_URL, DATA_DIR and what the caller added). */
  env: Record<string, string>
  /** An account made by the admin CLI, and a fetch of /api/v1 bound to its key. */
  accountId: string
  apiKey: string
  api: Api
  /** The test database, read as the server writes it. */
  pool: pg.Pool
  q(sql: string, values?: unknown[]): Promise<any[]>
  /** The server's embedded anvil (from DATA_DIR/chain/anvil.json) and its contracts (DATA_DIR/chain/manifest.json). */
  rpcUrl: string
  publicClient: PublicClient
  manifest: DeploymentManifest
  /** A raw JSON-RPC call to that anvil (`evm_setAutomine`, `evm_mine`…). */
  rpc(method: string, params?: unknown[]): Promise<unknown>
  /** Stops the server (SIGTERM; what is left is killed), then drops its database and data dir. */
  close(): Promise<void>
}

/**
 * The real service as a child process (`node src/main.ts`) on a database and data dir of its
 * own, with its embedded anvil: the HTTP API, the database and the chain the service uses, as a
 * test reaches them from outside.
 *
 * @example
 * const app = await startServerApp({ AUTOMATION_MIN_INTERVAL_SECONDS: '1' })
 * await app.api('POST', '/agents', { name: 'bot', skills: ['trading'] })
 * await app.publicClient.getBlockNumber()
 * await app.close()
 */
export async function startServerApp(extraEnv: Record<string, string> = {}, { name = 'alts-server-app' } = {}): Promise<ServerApp> {
  const database = await createTestDatabase()
  const dataDir = mkdtempSync(join(tmpdir(), `${name}-`))
  const pool = new pg.Pool({ connectionString: database.url, max: 4 })
  const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, ...extraEnv }
  let server: ServerProcess | undefined
  const close = async () => {
    if (server) {
      const s = server
      const stopped = await Promise.race([stopServer(s).then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 15_000))])
      if (!stopped) killServerHard(s)
    }
    await pool.end()
    await database.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    server = await startServer(env)
    const { rpcUrl } = JSON.parse(readFileSync(join(dataDir, 'chain', 'anvil.json'), 'utf8')) as { rpcUrl: string }
    const manifest = await readManifest(join(dataDir, 'chain', 'manifest.json'))
    const publicClient = createPublicClient({ transport: http(rpcUrl) }) as PublicClient
    const { accountId, apiKey } = await adminCreateAccount(env)
    return {
      server,
      env,
      accountId,
      apiKey,
      api: apiClient(`${server.url}/api/v1`, apiKey),
      pool,
      q: async (sql, values = []) => (await pool.query(sql, values)).rows,
      rpcUrl,
      publicClient,
      manifest,
      rpc: (method, params = []) => publicClient.request({ method: method as never, params: params as never }),
      close,
    }
  } catch (err) {
    if (server) killServerHard(server)
    server = undefined
    await close()
    throw err
  }
}
