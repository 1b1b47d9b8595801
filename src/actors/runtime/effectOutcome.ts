import type { AnyEventObject } from 'xstate'
import type { EffectRow, FinishWrite } from './actorKind.ts'
import * as store from './actorStore.ts'
import { planTransition, type PlannedTransition } from './applyEvent.ts'
import { finishEffect } from './effectStore.ts'
import { runSqlWrite, withTransaction } from './sql.ts'
import type { RuntimeCore } from './runtimeCore.ts'

export type EffectOutcome = { owner: string; status: 'done' | 'failed'; event: AnyEventObject | null; error?: string }

/**
 * Records an effect's end, the handler's writes and the actor's transition on the outcome event
 * in one transaction, under the actor's lock: one commit, no inbox round trip. When the actor
 * cannot take the event here (another event waits in its inbox, another node moved it, the
 * state refuses it, the event is invalid), the event goes to the inbox in that same transaction
 * and the inbox drain applies it in order, as for any event. A worker that lost the effect's
 * lease writes nothing. Answers whether the actor's inbox now holds the event (to be drained).
 */
export async function finishAndApply(core: RuntimeCore, effect: EffectRow, outcome: EffectOutcome, writes: FinishWrite[]): Promise<boolean> {
  const run = () =>
    core.withLock(effect.actorId, async () => {
      const planned = outcome.event ? await planOutcome(core, effect, outcome.event) : null
      const finish = { id: effect.id, owner: outcome.owner, status: outcome.status, result: outcome.event, error: outcome.error ?? null }
      // Nothing else to write: the finish and the transition go out with other actors' commits in
      // one statement (group commit). When a fence refuses it nothing was written, and the
      // transaction below takes the usual way (the event to the inbox).
      if (planned && writes.length === 0) {
        const version = await core.committer.commit({ ...planned.params, inboxSeq: null, requireEmptyInbox: true, finishEffect: finish })
        if (version !== undefined) {
          core.committed(planned)
          return false
        }
      }
      // Writes described as SQL (a charge, a message): they go out in the transition's own
      // statement, which fails as a whole when a fence refuses it; then the transaction below.
      const described = writes.filter((w) => typeof w !== 'function')
      if (planned && writes.length > 0 && described.length === writes.length) {
        const version = await store.commitTransitionWith(core.pool, { ...planned.params, inboxSeq: null, requireEmptyInbox: true, finishEffect: finish }, described)
        if (version !== undefined) {
          core.committed(planned)
          for (const w of described) w.afterCommit?.()
          return false
        }
      }
      // Nothing to apply and nothing else to write: the finish (with the event to the inbox, if
      // any) is one statement, atomic on its own; no transaction around it.
      if (!planned && writes.length === 0) {
        const finished = await finishEffect(core.pool, effect, outcome)
        return finished && outcome.event !== null
      }
      const afterCommit: Array<() => void> = []
      const applied = await withTransaction(core.pool, async (tx) => {
        // The effect row finished and the transition committed in one statement, while this worker
        // holds the lease; otherwise the event goes to the inbox (without the lease, nothing at all
        // is written). The handler's writes come last: a charge's account row lock is then held
        // only to the commit, not across the other statements.
        const done = planned !== null && (await store.commitTransition(tx, { ...planned.params, inboxSeq: null, requireEmptyInbox: true, finishEffect: finish })) !== undefined
        if (!done && !(await finishEffect(tx, effect, outcome))) throw leaseLost
        for (const write of writes) {
          const after = await (typeof write === 'function' ? write(tx) : write.inTransaction ? write.inTransaction(tx) : runSqlWrite(tx, write).then(() => write.afterCommit))
          if (after) afterCommit.push(after)
        }
        return done
      })
      if (applied && planned) core.committed(planned)
      else if (planned) core.forget(effect.actorId)
      for (const after of afterCommit) after()
      return outcome.event !== null && !applied
    })
  try {
    return await run()
  } catch (err) {
    if (err === leaseLost) return false
    throw err
  }
}

/** Thrown inside the finish to roll its writes back when the lease was taken over. */
const leaseLost = new Error('effect lease lost')

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
