import { z } from 'zod'
import { NotFoundError } from '../errors.ts'
import { decodeTupleCursor, encodeTupleCursor } from '../paging.schema.ts'
import { isPostgresTimestamp } from '../util/pageCursor.ts'
import type { ListAutomationsQuery } from './automation.schema.ts'
import { automationView } from './automationView.ts'
import type { AutomationPorts, AutomationState } from './ports.ts'

/** The account's automation (404 for another account's or an unknown id). */
export async function ownAutomation(deps: Pick<AutomationPorts, 'automations'>, accountId: string, automationId: string): Promise<AutomationState> {
  const a = await deps.automations.get(automationId)
  if (!a || a.accountId !== accountId) throw new NotFoundError('Automation')
  return a
}

/**
 * One automation with its last firings (number, time, source, outcome, tx hash or reason).
 *
 * @example
 * const a = await getAutomation(ports, { accountId, automationId })
 */
export async function getAutomation(deps: Pick<AutomationPorts, 'automations'>, input: { accountId: string; automationId: string }) {
  return automationView(await ownAutomation(deps, input.accountId, input.automationId))
}

/**
 * The account's automations, newest first, filtered by agent, status and kind; `nextCursor` when
 * older ones remain. An agent filter naming an agent the account does not own (another
 * account's, or none) is a 404, as every route addressing that agent answers.
 *
 * @example
 * const page = await listAutomations(ports, { accountId, query: { agent_id, status: 'armed', limit: 20 } })
 */
export async function listAutomations(deps: Pick<AutomationPorts, 'automations' | 'agents'>, input: { accountId: string; query: ListAutomationsQuery }) {
  const q = input.query
  const agentId = q.agent_id ?? q.agentId
  if (agentId !== undefined) await deps.agents.getOwned(input.accountId, agentId)
  const after = q.cursor ? decodeTupleCursor(q.cursor, z.tuple([z.string().max(40).refine(isPostgresTimestamp), z.uuid()])) : undefined
  const rows = await deps.automations.list({
    accountId: input.accountId, agentId, status: q.status, kind: q.kind, limit: q.limit + 1, after: after && { at: after[0], id: after[1] },
  })
  const page = rows.slice(0, q.limit)
  const last = page.at(-1)
  return { automations: page.map(automationView), nextCursor: rows.length > q.limit && last ? encodeTupleCursor([last.cursorAt, last.automationId]) : null }
}
