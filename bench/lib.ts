/**
 * Helpers shared by the benchmark: child processes that are always cleaned up, bench databases
 * that are always dropped, CPU accounting from /proc, and small statistics.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer, request } from 'node:http'
import { readFileSync, readdirSync } from 'node:fs'
import { cpus } from 'node:os'
import { fileURLToPath } from 'node:url'
import { dirname, resolve } from 'node:path'
import pg from 'pg'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

// ---------------------------------------------------------------------------------------------
// Child processes

const children = new Set<ChildProcess>()

export type Child = {
  proc: ChildProcess
  pid: number
  stdout(): string
  stderr(): string
  exited: Promise<number | null>
  stop(): Promise<void>
}

/** Spawns `node <args>` from the repo root; the child is killed when this process exits. */
export function spawnNode(
  args: string[],
  env: Record<string, string>,
  { nodeArgs = [] as string[], stdin = false, group = false } = {},
): Child {
  // group: the child leads its own process group, so whatever it starts (the service's embedded
  // anvil) can be killed with it if it does not stop by itself.
  const proc = spawn(process.execPath, [...nodeArgs, ...args], {
    cwd: ROOT,
    env,
    stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    detached: group,
  })
  children.add(proc)
  if (group) groups.add(proc.pid!)
  let out = ''
  let err = ''
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d
  })
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d
    if (err.length > 200_000) err = err.slice(-100_000)
  })
  const exited = new Promise<number | null>((res) => {
    proc.on('exit', (code) => {
      children.delete(proc)
      res(code)
    })
    // A group leader that exited may leave members behind (see stop()); keep it in `groups`.
    proc.on('error', () => {
      children.delete(proc)
      res(null)
    })
  })
  return {
    proc,
    pid: proc.pid!,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM')
        const t = setTimeout(() => proc.kill('SIGKILL'), 10_000)
        await exited
        clearTimeout(t)
      }
      if (group) {
        killGroup(proc.pid!, 'SIGKILL') // anything of the group still alive (normally nothing)
        groups.delete(proc.pid!)
      }
    },
  }
}

const groups = new Set<number>()

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal)
  } catch {
    // no such group left
  }
}

/** Synchronous last resort (process 'exit'): kill whatever child (and child group) is still alive. */
export function killAllChildrenSync(): void {
  for (const c of children) {
    try {
      c.kill('SIGKILL')
    } catch {
      // already gone
    }
  }
  for (const g of groups) killGroup(g, 'SIGKILL')
}

/**
 * A minimal environment: nothing from the caller's shell configures the service by accident,
 * except ACTOR_COMMIT_CONCURRENCY, passed on on purpose to compare group-commit settings.
 */
export function baseEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {}
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'ACTOR_COMMIT_CONCURRENCY']) if (process.env[k]) env[k] = process.env[k]!
  return { ...env, ...extra }
}

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const a = s.address()
      const port = typeof a === 'object' && a ? a.port : 0
      s.close(() => res(port))
    })
    s.on('error', rej)
  })
}

/** One GET; resolves the status code (0 when the connection failed). */
export function httpStatus(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((res) => {
    const req = request(url, { method, headers: { connection: 'close', ...headers }, agent: false }, (r) => {
      let body = ''
      r.setEncoding('utf8')
      r.on('data', (d: string) => {
        body += d
      })
      r.on('end', () => res({ status: r.statusCode ?? 0, body }))
      r.on('error', () => res({ status: 0, body }))
    })
    req.on('error', () => res({ status: 0, body: '' }))
    req.end()
  })
}

/** Polls `url` every `everyMs` until it answers 200; returns ms since `t0` (performance.now()). */
export async function waitFor200(url: string, child: Child, { t0 = performance.now(), everyMs = 5, timeoutMs = 60_000 } = {}): Promise<number> {
  let dead = false
  void child.exited.then(() => {
    dead = true
  })
  for (;;) {
    const { status } = await httpStatus(url)
    if (status === 200) return performance.now() - t0
    if (dead) throw new Error(`child exited before ${url} answered 200:\n${child.stderr().slice(-3000)}`)
    if (performance.now() - t0 > timeoutMs) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms:\n${child.stderr().slice(-3000)}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

// ---------------------------------------------------------------------------------------------
// Databases

const databases = new Set<string>()
let closing = false

export function dbUrl(name: string): string {
  const u = new URL(ADMIN_URL)
  u.pathname = `/${name}`
  return u.toString()
}

export async function adminQuery(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: ADMIN_URL })
  await c.connect()
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}

/** Creates an empty database that `dropAllDatabases` will remove. Name: [a-z0-9_] only. */
export async function createDatabase(name: string): Promise<string> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`bad database name ${name}`)
  if (closing) throw new Error('cleaning up; no new databases')
  databases.add(name)
  await adminQuery(`create database ${name}`)
  return dbUrl(name)
}

export async function dropAllDatabases(): Promise<string[]> {
  closing = true
  const dropped: string[] = []
  for (const name of [...databases]) {
    try {
      await adminQuery(`drop database if exists ${name} with (force)`)
      databases.delete(name)
      dropped.push(name)
    } catch (err) {
      process.stderr.write(`bench: could not drop database ${name}: ${(err as Error).message}\n`)
    }
  }
  return dropped
}

// ---------------------------------------------------------------------------------------------
// CPU accounting (Linux /proc; zeros elsewhere)

const TICKS_PER_SECOND = 100

/** utime + stime of a process (fields 14 and 15 of /proc/<pid>/stat), and stime alone. */
function procTimes(pid: number): { all: number; sys: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { all: Number(fields[11]) + Number(fields[12]), sys: Number(fields[12]) }
  } catch {
    return { all: 0, sys: 0 }
  }
}
const procTicks = (pid: number) => procTimes(pid).all

/** A process and all its descendants (e.g. the service and its embedded anvil). */
function processTree(root: number): number[] {
  const kids = new Map<number, number[]>()
  try {
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue
      const ppid = parentPid(Number(d))
      if (!kids.has(ppid)) kids.set(ppid, [])
      kids.get(ppid)!.push(Number(d))
    }
  } catch {
    return [root]
  }
  const out: number[] = []
  const todo = [root]
  while (todo.length) {
    const p = todo.pop()!
    out.push(p)
    todo.push(...(kids.get(p) ?? []))
  }
  return out
}

/** CPU ticks of a process tree; processes that exit during a window take their ticks with them. */
function treeTimes(root: number): Map<number, { all: number; sys: number }> {
  return new Map(processTree(root).map((p) => [p, procTimes(p)]))
}

let pgScope: { postmaster: number; dbPrefix: string } | undefined

/**
 * Restricts the "pg" CPU column to one cluster (the children of `postmaster`) and, among its
 * client backends, to databases whose name starts with `dbPrefix`, so other users of the same
 * machine or server land in "other". Without it, every process named postgres counts.
 */
export function scopePostgres(postmaster: number, dbPrefix: string): void {
  pgScope = { postmaster, dbPrefix }
}

function parentPid(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return 0
  }
}

/** A client backend's title names user, database and client address ("... 127.0.0.1(5432) idle"). */
const CLIENT_BACKEND = /\(\d+\)|\[local\]/

function postgresPids(): number[] {
  const pids: number[] = []
  try {
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue
      try {
        if (readFileSync(`/proc/${d}/comm`, 'utf8').trim() !== 'postgres') continue
        const pid = Number(d)
        if (pgScope) {
          if (pid !== pgScope.postmaster && parentPid(pid) !== pgScope.postmaster) continue
          const title = readFileSync(`/proc/${d}/cmdline`, 'utf8').replaceAll('\0', ' ')
          if (CLIENT_BACKEND.test(title) && !title.includes(` ${pgScope.dbPrefix}`)) continue
        }
        pids.push(pid)
      } catch {
        // gone
      }
    }
  } catch {
    // no /proc
  }
  return pids
}

/** The postmaster behind a connection (parent of its backend), for `scopePostgres`. */
export function postmasterOf(backendPid: number): number {
  return parentPid(backendPid)
}

function machineTicks(): { idle: number; total: number } {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
    const idle = (line[3] ?? 0) + (line[4] ?? 0)
    return { idle, total: line.reduce((a, b) => a + b, 0) }
  } catch {
    return { idle: 0, total: 0 }
  }
}

export type CpuShare = {
  /** CPU used during the window by the process under test and its descendants, as % of one core. */
  server: number
  /** The kernel-mode part of `server`. */
  serverSys: number
  loadgen: number
  postgres: number
  /** Whole machine busy %, of all cores. */
  machine: number
  /** Everything else on the machine (other users, kernel), as % of one core. */
  other: number
  /** `server` and `postgres` as CPU milliseconds over the window, unrounded (per-operation figures at low rates). */
  serverMs: number
  postgresMs: number
}

/** Starts a CPU window over a child (the server under test), this process, and every postgres process. */
export function cpuWindow(serverPid: number | undefined) {
  const t0 = performance.now()
  const s0 = serverPid ? treeTimes(serverPid) : new Map<number, { all: number; sys: number }>()
  const l0 = process.cpuUsage()
  const pg0 = new Map(postgresPids().map((p) => [p, procTicks(p)]))
  const m0 = machineTicks()
  return (): CpuShare => {
    const secs = (performance.now() - t0) / 1000
    let sAll = 0
    let sSys = 0
    for (const [p, t] of serverPid ? treeTimes(serverPid) : new Map<number, { all: number; sys: number }>()) {
      const before = s0.get(p) ?? { all: 0, sys: 0 }
      sAll += Math.max(0, t.all - before.all)
      sSys += Math.max(0, t.sys - before.sys)
    }
    const l1 = process.cpuUsage(l0)
    let pgTicks = 0
    for (const p of postgresPids()) pgTicks += Math.max(0, procTicks(p) - (pg0.get(p) ?? 0))
    const m1 = machineTicks()
    const dt = m1.total - m0.total
    const pct = (ticks: number) => round((100 * ticks) / TICKS_PER_SECOND / secs, 0)
    const server = pct(sAll)
    const loadgen = round((100 * (l1.user + l1.system)) / 1e6 / secs, 0)
    const postgres = pct(pgTicks)
    const machine = dt > 0 ? round(100 * (1 - (m1.idle - m0.idle) / dt), 0) : 0
    const other = Math.max(0, Math.round(machine * cpus().length - server - loadgen - postgres))
    const ms = (ticks: number) => (1000 * ticks) / TICKS_PER_SECOND
    return { server, serverSys: pct(sSys), loadgen, postgres, machine, other, serverMs: ms(sAll), postgresMs: ms(pgTicks) }
  }
}

// ---------------------------------------------------------------------------------------------
// Statistics

export const round = (x: number, digits = 2) => {
  const f = 10 ** digits
  return Math.round(x * f) / f
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

export const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i]!
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** Runs `total` jobs with `concurrency` in flight. */
export async function pool(concurrency: number, total: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) await job(next++)
  }))
}
