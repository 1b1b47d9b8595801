import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll } from 'vitest'
import { freePort } from '../../src/dev/embeddedPostgres.ts'

const run = promisify(execFile)

export type ServerProcess = { child: ChildProcess; url: string; port: number; logs: () => string; dataDir: string | undefined }

/** Starts `node src/main.ts` in its own process group and waits for /health to answer 200. */
export async function startServer(
  env: Record<string, string>,
  { port, nodeArgs = [], cwd }: { port?: number; /** Extra `node` flags (a benchmark's --cpu-prof). */ nodeArgs?: string[]; /** Another checkout to run (a benchmark's baseline tree). */ cwd?: string } = {},
): Promise<ServerProcess> {
  const p = port ?? (await freePort())
  let logs = ''
  const child = spawn(process.execPath, [...nodeArgs, 'src/main.ts'], {
    cwd,
    env: { ...process.env, LOG_LEVEL: 'info', ...env, PORT: String(p), HOST: '127.0.0.1' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout?.on('data', (d) => (logs += d))
  child.stderr?.on('data', (d) => (logs += d))
  const url = `http://127.0.0.1:${p}`
  const until = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${logs}`)
    try {
      const res = await fetch(`${url}/api/v1/health`)
      if (res.status === 200) break
    } catch {}
    if (Date.now() > until) throw new Error(`server did not become healthy:\n${logs}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  return { child, url, port: p, logs: () => logs, dataDir: env.DATA_DIR }
}

/** SIGKILL: the whole process group (children such as embedded Postgres too), or the node process alone. */
export async function kill9(server: ServerProcess, { group = true } = {}): Promise<void> {
  const pid = server.child.pid!
  const exited = new Promise((r) => server.child.once('exit', r))
  process.kill(group ? -pid : pid, 'SIGKILL')
  await exited
}

export async function stopServer(server: ServerProcess): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return
  const exited = new Promise((r) => server.child.once('exit', r))
  server.child.kill('SIGTERM')
  await exited
}

/**
 * Kills what is left of a server: its process group (node, embedded Postgres) and the embedded
 * anvil it recorded in `DATA_DIR/chain/anvil.json` (anvil runs in a group of its own). For test
 * cleanup after failures; a server stopped cleanly has nothing left.
 */
export function killServerHard(server: ServerProcess): void {
  try {
    process.kill(-server.child.pid!, 'SIGKILL')
  } catch {}
  if (!server.dataDir) return
  try {
    const { pid } = JSON.parse(readFileSync(join(server.dataDir, 'chain', 'anvil.json'), 'utf8')) as { pid?: number }
    if (pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('anvil')) process.kill(pid, 'SIGKILL')
  } catch {}
}

/**
 * For test files that start servers: everything pushed to `servers` is killed after all tests
 * (whatever state a failure left it in), then every function in `cleanups` runs.
 *
 * @example
 * const { servers, cleanups } = serverCleanup()
 * servers.push(await startServer(env))
 */
export function serverCleanup() {
  const servers: ServerProcess[] = []
  const cleanups: Array<() => Promise<void> | void> = []
  afterAll(async () => {
    for (const s of servers) killServerHard(s)
    for (const c of cleanups) await c()
  })
  return { servers, cleanups }
}

/** Runs the admin CLI the way the README shows it and parses its one JSON line. */
export async function adminCreateAccount(env: Record<string, string>, args: string[] = [], { cwd }: { cwd?: string } = {}) {
  const { stdout } = await run(process.execPath, ['scripts/admin.ts', 'create-account', '--name', 'crash', ...args], {
    env: { ...process.env, ...env },
    cwd,
  })
  const lines = stdout.trim().split('\n')
  if (lines.length !== 1) throw new Error(`expected one line, got: ${stdout}`)
  return JSON.parse(lines[0]!) as { accountId: string; apiKey: string }
}
