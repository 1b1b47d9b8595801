export type PendingChangeRow = { field: string; value: unknown; effective_at: string }

/** `max_trade_usd` -> `maxTradeUsd`: responses are camelCase, the fields of a change included. */
const camelCase = (field: string) => field.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())

/** The pending changes as the API shows them: grouped by the moment they take effect, soonest first. */
export function pendingChangesView(rows: readonly PendingChangeRow[] | null | undefined) {
  const groups = new Map<string, Record<string, unknown>>()
  for (const r of rows ?? []) {
    const at = new Date(r.effective_at).toISOString()
    const changes = groups.get(at) ?? {}
    changes[camelCase(r.field)] = r.value
    groups.set(at, changes)
  }
  return [...groups].map(([effectiveAt, changes]) => ({ changes, effectiveAt }))
}
