/**
 * The soak's readings (bench/soak.ts): the scheduled runs as they start, read by a created_at
 * cursor; the database's and the runtime tables' sizes from Postgres's statistics; the
 * compaction's backlog; and the goals evaluated over the minutes.
 */
import type pg from 'pg'
import { percentile, round } from './lib.ts'

/** The tables whose rows, size and dead tuples are read each minute. */
export const TABLES = ['actor', 'actor_journal', 'actor_inbox', 'actor_timer', 'effect', 'account_event', 'credit_entry', 'credit_reservation', 'chat_message'] as const
export type TableStats = { rows: number; bytes: number; dead: number }

/**
 * The scheduled runs as they start: each poll reads the runs created since the last one (with a
 * 5 s overlap, for a transaction that committed after later ones; rows are kept by id) through the
 * actor table's (created_at, kind) index, and counts each in the minute of its start (a run's
 * created_at). A run's due time is its agent's previous run's start plus the interval (a run's
 * start schedules the next), so its delay is known as it comes; an agent's first run has none.
 * Nothing older than the cursor is read again: the reads cost the same in the first minute and
 * the sixtieth, and do not depend on compacted rows.
 */
export function runTracker(db: pg.Pool, t0: number, intervalMs: number) {
  const seen = new Map<string, number>()
  const lastStart = new Map<string, number>()
  const minutes = new Map<number, { runs: number; delays: number[] }>()
  let since = t0 - 60_000
  let queryMs = 0
  return {
    async poll() {
      const q0 = performance.now()
      const { rows } = await db.query<{ id: string; agent: string | null; at: Date }>(
        `select id, parent_id as agent, created_at as at from actor where created_at > $1 and kind = 'run' order by created_at`,
        [new Date(since - 5_000)])
      queryMs += performance.now() - q0
      for (const r of rows) {
        if (seen.has(r.id)) continue
        const at = r.at.getTime()
        seen.set(r.id, at)
        const minute = Math.floor((at - t0) / 60_000) + 1
        const m = minutes.get(minute) ?? { runs: 0, delays: [] }
        m.runs++
        const previous = r.agent ? lastStart.get(r.agent) : undefined
        if (previous !== undefined) m.delays.push(at - previous - intervalMs)
        if (r.agent && (previous === undefined || at > previous)) lastStart.set(r.agent, at)
        minutes.set(minute, m)
      }
      if (rows.length) since = Math.max(since, rows[rows.length - 1]!.at.getTime())
      for (const [id, at] of seen) if (at < since - 60_000) seen.delete(id)
    },
    /** The runs that started in a minute (1-based, from t0), and their due-to-start delays. */
    minute(minute: number) {
      const m = minutes.get(minute) ?? { runs: 0, delays: [] }
      const delays = [...m.delays].sort((a, b) => a - b)
      return { runs: m.runs, scheduled: delays.length, p50: delays.length ? round(percentile(delays, 50)) : null, p99: delays.length ? round(percentile(delays, 99)) : null }
    },
    /** Milliseconds spent in the poll's statement since the last call (the bench's own reads). */
    takeQueryMs() {
      const ms = queryMs
      queryMs = 0
      return ms
    },
  }
}

/** Whether the actor table has the compaction's columns (`compact_after`, `compacted_at`). */
export async function hasCompactionColumns(db: pg.Pool): Promise<boolean> {
  const { rows: [r] } = await db.query<{ n: number }>(
    `select count(*)::int as n from information_schema.columns
      where table_schema = current_schema() and table_name = 'actor' and column_name in ('compact_after', 'compacted_at')`)
  return r!.n === 2
}

/**
 * The database's size, each table's live and dead tuples (the statistics' estimates: a count(*)
 * over the big tables would compete with what is measured) and total size with indexes and
 * TOAST, and the compaction's backlog: the actors whose window has passed and that are not
 * compacted yet (null without the columns).
 */
export async function probeDatabase(db: pg.Pool, compaction: boolean) {
  const q0 = performance.now()
  const { rows: [size] } = await db.query<{ bytes: string }>(`select pg_database_size(current_database()) as bytes`)
  const { rows } = await db.query<{ name: string; rows: string; dead: string; bytes: string }>(
    `select relname as name, n_live_tup as rows, n_dead_tup as dead, pg_total_relation_size(relid) as bytes
       from pg_stat_user_tables where schemaname = current_schema() and relname = any($1)`, [TABLES])
  const tables = Object.fromEntries(TABLES.map((t) => {
    const r = rows.find((x) => x.name === t)
    return [t, { rows: Number(r?.rows ?? 0), bytes: Number(r?.bytes ?? 0), dead: Number(r?.dead ?? 0) }]
  })) as Record<(typeof TABLES)[number], TableStats>
  const b0 = performance.now()
  const backlog = compaction
    ? Number((await db.query<{ n: string }>(`select count(*) as n from actor where compact_after <= now() and compacted_at is null`)).rows[0]!.n)
    : null
  const backlogQueryMs = compaction ? round(performance.now() - b0, 1) : null
  return { databaseBytes: Number(size!.bytes), tables, deadTuples: rows.reduce((s, r) => s + Number(r.dead), 0), backlog, backlogQueryMs, queryMs: performance.now() - q0 }
}

export type SoakMinute = {
  minute: number; runsPerSecond: number; dueToStartP99Ms: number | null; postgresCpuMsPerRun: number | null; serviceCpuMsPerRun: number | null
  databaseBytes: number; runs: number; dueToStartP50Ms: number | null; backlog: number | null; deadTuples: number
  tables: Record<(typeof TABLES)[number], TableStats>; machineCpuPct: number; harnessQueryMs: number; backlogQueryMs: number | null
}

const mb = (bytes: number) => round(bytes / 1_048_576, 1)
const short = (n: number) => (n >= 1e6 ? `${round(n / 1e6, 1)}M` : n >= 1e4 ? `${round(n / 1e3, 0)}k` : String(n))
const ABBR: Record<(typeof TABLES)[number], string> = {
  actor: 'actor', actor_journal: 'journal', actor_inbox: 'inbox', actor_timer: 'timer', effect: 'effect',
  account_event: 'event', credit_entry: 'credit', credit_reservation: 'resv', chat_message: 'chat',
}
const COLUMNS = ['min', 'runs/s', 'p50 ms', 'p99 ms', 'pg ms/run', 'svc ms/run', 'db MB', 'backlog', 'dead', ...TABLES.map((t) => `${ABBR[t]} rows/MB`)]
const WIDTHS = COLUMNS.map((c) => Math.max(c.length, 7))
const line = (cells: string[]) => cells.map((c, i) => c.padStart(WIDTHS[i]!)).join(' ')

export const tableHeader = () => line(COLUMNS)
export const tableRow = (m: SoakMinute) => line([
  String(m.minute), String(m.runsPerSecond), String(m.dueToStartP50Ms ?? '-'), String(m.dueToStartP99Ms ?? '-'),
  String(m.postgresCpuMsPerRun ?? '-'), String(m.serviceCpuMsPerRun ?? '-'), String(mb(m.databaseBytes)), String(m.backlog ?? 'null'),
  short(m.deadTuples), ...TABLES.map((t) => `${short(m.tables[t].rows)}/${mb(m.tables[t].bytes)}`),
])

export type Goal = { goal: string; verdict: 'pass' | 'miss' | 'needs a longer run'; detail: string }

const cpuPerRun = (ms: SoakMinute[]) => {
  const runs = ms.reduce((s, m) => s + m.runs, 0)
  return runs ? ms.reduce((s, m) => s + (m.postgresCpuMsPerRun ?? 0) * m.runs, 0) / runs : NaN
}

/**
 * The soak's goals over its minutes: each minute after the first ten at the schedule's rate
 * (agents / interval: 167 runs/s at 10,000 agents on 60 s) with due-to-start p99 <= 5 s; Postgres
 * CPU per run in the last ten minutes within 15 % of minutes 11-20; the database's size within
 * 10 % over the last third, once that third starts after the retention window (before it, the
 * database only grows). A goal the run is too short for says how long a run it needs.
 */
export function evaluateGoals(minutes: SoakMinute[], agents: number, intervalSeconds: number, retentionMinutes: number): Goal[] {
  const total = minutes.length
  const target = round(agents / intervalSeconds, 1)
  const goals: Goal[] = []
  const after10 = minutes.filter((m) => m.minute > 10)
  if (!after10.length) goals.push({ goal: `every minute after the first ten at >= ${target} runs/s with due-to-start p99 <= 5 s`, verdict: 'needs a longer run', detail: 'at least 11 minutes' })
  else {
    const slow = after10.filter((m) => m.runsPerSecond < target)
    const late = after10.filter((m) => m.dueToStartP99Ms === null || m.dueToStartP99Ms > 5_000)
    const minRate = Math.min(...after10.map((m) => m.runsPerSecond))
    const maxP99 = Math.max(...after10.map((m) => m.dueToStartP99Ms ?? Infinity))
    goals.push({
      goal: `every minute after the first ten at >= ${target} runs/s with due-to-start p99 <= 5 s`, verdict: slow.length || late.length ? 'miss' : 'pass',
      detail: `minutes 11-${total}: lowest ${minRate} runs/s, highest p99 ${maxP99} ms; ${slow.length} minute(s) below the rate, ${late.length} above 5 s`,
    })
  }
  if (total < 30) goals.push({ goal: 'Postgres CPU per run in the last ten minutes within 15 % of minutes 11-20', verdict: 'needs a longer run', detail: 'at least 30 minutes' })
  else {
    const base = cpuPerRun(minutes.filter((m) => m.minute > 10 && m.minute <= 20))
    const last = cpuPerRun(minutes.slice(-10))
    const change = last / base - 1
    goals.push({
      goal: 'Postgres CPU per run in the last ten minutes within 15 % of minutes 11-20', verdict: Math.abs(change) <= 0.15 ? 'pass' : 'miss',
      detail: `${round(base)} ms per run in minutes 11-20, ${round(last)} ms in minutes ${total - 9}-${total}: ${change >= 0 ? '+' : ''}${round(100 * change, 1)} %`,
    })
  }
  const thirdStart = (n: number) => n - Math.round(n / 3) + 1
  let needed = 6
  while (thirdStart(needed) <= retentionMinutes + 1) needed++
  if (total < needed) goals.push({ goal: "the database's size within 10 % over the last third", verdict: 'needs a longer run', detail: `at least ${needed} minutes (the last third must start after the ${retentionMinutes}-minute retention window)` })
  else {
    const third = minutes.filter((m) => m.minute >= thirdStart(total))
    const sizes = third.map((m) => m.databaseBytes)
    const spread = Math.max(...sizes) / Math.min(...sizes) - 1
    goals.push({
      goal: "the database's size within 10 % over the last third", verdict: spread <= 0.1 ? 'pass' : 'miss',
      detail: `minutes ${third[0]!.minute}-${total}: ${mb(Math.min(...sizes))} to ${mb(Math.max(...sizes))} MB (${round(100 * spread, 1)} %); first minute ${mb(third[0]!.databaseBytes)} MB, last ${mb(third[third.length - 1]!.databaseBytes)} MB`,
    })
  }
  return goals
}
