import { z } from 'zod'
import type { AgentsRepository } from '../agents/ports.ts'
import { decodeTupleCursor, encodeTupleCursor } from '../paging.schema.ts'
import type { ListRunsQuery } from './run.schema.ts'
import type { Runs } from './ports.ts'
import { runView } from './getRun.ts'

/** A timestamp exactly as `toISOString` writes it (so `2026-02-30` or year 0 are refused). */
const isoInstant = z.string().max(40).refine((s) => {
  const t = Date.parse(s)
  return !Number.isNaN(t) && new Date(t).toISOString() === s
})

/**
 * An agent's runs made by the account, newest first (`limit` default 20), `?status=` to filter;
 * `nextCursor` when older ones remain. A bought agent's runs of its former owner are not listed.
 *
 * @example
 * const page = await listRuns({ agents, runs }, { accountId, agentId, query: { status: 'completed' } })
 */
export async function listRuns(deps: { agents: Pick<AgentsRepository, 'assertOwned'>; runs: Runs }, input: { accountId: string; agentId: string; query: ListRunsQuery }) {
  await deps.agents.assertOwned(input.accountId, input.agentId)
  const { limit, cursor, status } = input.query
  const before = cursor ? decodeTupleCursor(cursor, z.tuple([isoInstant, z.uuid()])) : undefined
  const rows = await deps.runs.list(input.agentId, { accountId: input.accountId, limit: limit + 1, status, before: before && { at: before[0], id: before[1] } })
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  return { runs: page.map(runView), nextCursor: rows.length > limit && last ? encodeTupleCursor([last.createdAt, last.runId]) : null }
}
