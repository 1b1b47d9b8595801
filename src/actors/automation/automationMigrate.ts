import type { FiringRecord, FiringSource } from '../../domain/automations/automation.types.ts'

/**
 * The part of a version 1 automation's context this migration reads. A migration reads the shape
 * its source version wrote, not the machine's current context type (which moves on).
 */
type V1Context = {
  trigger: { type: string; everySeconds?: number }
  nextRunAt: string | null
  firings: FiringRecord[]
  current: { source: FiringSource; [k: string]: unknown } | null
  [k: string]: unknown
}

/**
 * A version 1 automation snapshot in version 2's shape. Version 1 moved an interval's `nextRunAt`
 * past a timer firing's tick only when it went back to `armed` right after that firing, so a
 * stored one may still name the tick it served: its firing in flight (`executing`), or the
 * last timer firing, when it paused, went `error`, or served a waiting trigger after it (its
 * `nextRunAt` at or before that firing's end). That tick is moved past here, as version 2 does
 * when a timer firing starts. One left `armed.timed` may still hold its version 1 timer
 * (LEGACY_DUE): it is heard as `automation.due`, or goes when that timer is set or cancelled
 * (the kind's `renamedTimers`).
 */
export function migrateAutomationSnapshot(persisted: unknown, fromVersion: number): unknown {
  if (fromVersion !== 1) throw new Error(`no migration from automation machine version ${fromVersion}`)
  const s = persisted as { value: unknown; context: V1Context }
  const c = s.context
  const top = typeof s.value === 'string' ? s.value : Object.keys(s.value as object)[0]
  const context = { ...c, lastTimerAt: null }
  if (c.trigger.type !== 'interval' || !c.trigger.everySeconds || !c.nextRunAt) return { ...s, context }
  const tick = Date.parse(c.nextRunAt)
  const moved = new Date(tick + c.trigger.everySeconds * 1000).toISOString()
  if (c.current?.source.source === 'timer') return { ...s, context: { ...context, nextRunAt: moved, current: { ...c.current, tick: c.nextRunAt } } }
  const served = c.firings.findLast((f) => f.source === 'timer' && f.outcome !== 'skipped')
  const leftBehind = served && tick <= Date.parse(served.at) && (top !== 'armed' || c.firings.at(-1) !== served)
  return { ...s, context: leftBehind ? { ...context, nextRunAt: moved } : context }
}
