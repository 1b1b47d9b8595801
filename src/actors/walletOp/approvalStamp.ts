/**
 * An approval event stamped with `at`, when the runtime takes it in (a kind's `parseEvent` calls
 * it; the stamped event is journaled, so a replay is the same); other events as they are. Apart
 * from the machines, which never read a clock (test/replay.test.ts).
 */
export function stampApprovalEvent<E extends { type: string }>(event: E): E {
  if (!event.type.startsWith('approval.')) return event
  const at = (event as { at?: string }).at
  return { ...event, at: at && !Number.isNaN(Date.parse(at)) ? at : new Date().toISOString() }
}
