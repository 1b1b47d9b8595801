import type { AnyEventObject } from 'xstate'
import { SPAWN_CHILD, type ActorKind } from './actorKind.ts'
import type { NewEffect, TimerUpsert } from './actorStore.ts'

export type PlannedActions = {
  effects: NewEffect[]
  timerUpserts: TimerUpsert[]
  timerDeletes: string[]
  timers: Record<string, number>
}

export type Action = { type: string; params?: unknown }

/** Effect ids are stable: actor, the version the transition produced, and the action's index. */
const effectId = (actorId: string, version: number, index: number) => `${actorId}:${version}:${index}`

/**
 * Turns the actions of one transition into durable rows: custom effect actions (and child
 * spawns) become effects, delayed raises become timers (generation = version * 1000 + index,
 * unique per actor), and cancels remove them. Only the net result per timer key is written.
 */
export function planActions(kind: ActorKind, actorId: string, newVersion: number, actions: Action[], liveTimers: Record<string, number>): PlannedActions {
  const timers = { ...liveTimers }
  const upserts = new Map<string, TimerUpsert>()
  const deletes = new Set<string>()
  const effects: NewEffect[] = []
  const drop = (key: string) => {
    delete timers[key]
    upserts.delete(key)
    deletes.add(key)
  }
  // Setting or cancelling a timer also drops the one an older machine version armed in its place (`renamedTimers`).
  const dropRenamed = (key: string) => {
    for (const [old, now] of Object.entries(kind.renamedTimers ?? {})) if (now === key && old in timers) drop(old)
  }
  actions.forEach((action, index) => {
    const params = (action.params ?? {}) as Record<string, unknown>
    if (action.type === 'xstate.raise' && typeof params.delay === 'number') {
      const key = String(params.id ?? (params.event as AnyEventObject).type)
      const generation = newVersion * 1000 + index
      timers[key] = generation
      deletes.delete(key)
      upserts.set(key, { key, generation, delayMs: params.delay, event: params.event })
      dropRenamed(key)
    } else if (action.type === 'xstate.cancel') {
      const key = String(params.sendId)
      drop(key)
      dropRenamed(key)
    } else if (kind.effects.includes(action.type) || action.type === SPAWN_CHILD) {
      effects.push({ id: effectId(actorId, newVersion, index), kind: action.type, params: action.params ?? {} })
    }
  })
  return { effects, timerUpserts: [...upserts.values()], timerDeletes: [...deletes], timers }
}
