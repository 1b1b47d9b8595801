import type { AnyEventObject } from 'xstate'
import type { EffectRow, FinishWrite } from './actorKind.ts'
import * as store from './actorStore.ts'
import { planTransition, type PlannedTransition } from './applyEvent.ts'
import { finishEffect } from './effectStore.ts'
import { withTransaction } from '../db/transaction.ts'
import type { RuntimeCore } from './runtimeCore.ts'

export type EffectOutcome = { owner: string; status: 'done' | 'failed'; event: AnyEventObject | null; error?: string }

/**
 * Records an effect's end, the handler's writes and the actor's transition on the outcome event
 * in one transaction, under the actor's lock: one commit, no inbox round trip. When the actor
 * cannot take the event here (another event waits in its inbox, another node moved it, the
 * state refuses it, the event is invalid), the event goes to the inbox in that same transaction
 * and the inbox drain applies it in order, as for any event. A worker that lost the effect's
 * lease writes nothing. Answers whether this call finished the effect and whether the inbox
 * needs draining.
 */
export function finishAndApply(core: RuntimeCore, effect: EffectRow, outcome: EffectOutcome, writes: FinishWrite[]): Promise<{ finished: boolean; drain: boolean }> {
  return core.withLock(effect.actorId, async () => {
    const planned = outcome.event ? await planOutcome(core, effect, outcome.event) : null
    let applied = false
    const finished = await withTransaction(core.pool, async (tx) => {
      // The event goes to the inbox unless the transition below is committed instead.
      const ok = await finishEffect(tx, effect, { ...outcome, event: planned ? null : outcome.event, result: outcome.event })
      if (!ok) return false
      for (const write of writes) await write(tx)
      if (planned) {
        applied = (await store.commitTransition(tx, { ...planned.params, inboxSeq: null, requireEmptyInbox: true })) !== undefined
        if (!applied) {
          core.forget(effect.actorId)
          await store.enqueue(tx, { actorId: effect.actorId, accountId: effect.accountId, event: outcome.event, dedupeKey: `effect:${effect.id}` })
        }
      }
      return true
    })
    if (finished && applied && planned) core.committed(planned)
    return { finished, drain: finished && outcome.event !== null && !applied }
  })
}

/** The transition the outcome makes on the actor as this runtime holds it; null to leave it to the inbox. */
async function planOutcome(core: RuntimeCore, effect: EffectRow, raw: AnyEventObject): Promise<PlannedTransition | null> {
  try {
    const entry = await core.load(effect.actorId)
    if (!entry) return null
    return planTransition(core, entry, entry.kind.parseEvent(raw))
  } catch {
    // Unloadable actor or invalid event: the drain marks it stuck or dead-letters the event.
    return null
  }
}
