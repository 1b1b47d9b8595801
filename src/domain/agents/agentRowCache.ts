import type { AgentRecord } from './ports.ts'

const MAX_ROWS = 10_000

/**
 * Agent rows held in this process's memory for `ttlMs`, for reads (GET /agents/:id, the tools'
 * get_agent); a write on this node drops its row at once. The status is never taken from here:
 * reads lay the actor's live status over the row.
 *
 * @example
 * const rows = createAgentRowCache({ ttlMs: 2000 })
 */
export function createAgentRowCache({ ttlMs }: { ttlMs: number }) {
  const rows = new Map<string, { row: AgentRecord; at: number }>()
  return {
    get(agentId: string): AgentRecord | undefined {
      const hit = rows.get(agentId)
      return hit && Date.now() - hit.at < ttlMs ? hit.row : undefined
    },
    set(row: AgentRecord) {
      rows.delete(row.id)
      rows.set(row.id, { row, at: Date.now() })
      if (rows.size > MAX_ROWS) rows.delete(rows.keys().next().value!)
    },
    drop(agentId: string) {
      rows.delete(agentId)
    },
  }
}
export type AgentRowCache = ReturnType<typeof createAgentRowCache>
