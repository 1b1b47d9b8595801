import type pg from 'pg'
import type { Logger } from './runtimeLogger.ts'
import type { ActorEntry, EffectHandler, EffectRow, FinishWrite } from './actorKind.ts'
import * as effects from './effectStore.ts'
import { runInEffectScope } from './effectScope.ts'
import type { EffectOutcome } from './effectOutcome.ts'
import type { TraceHooks } from './runtimeCore.ts'

export type EffectWorkerOptions = {
  pool: pg.Pool
  logger: Logger
  handlers: Record<string, EffectHandler>
  /** Effect kinds that never give up (see ActorKind.persistentEffects). */
  persistent: Set<string>
  maxAttempts: number
  /** This worker's name on the leases it holds. */
  owner: string
  leaseMs: number
  isStopped(): boolean
  track<T>(p: Promise<T>): Promise<T>
  /** The actor an effect belongs to (the runtime's cache, else its row). */
  loadActor(id: string): Promise<ActorEntry | undefined>
  /** Records the effect's end with the handler's writes and reports its event to the actor (see effectOutcome.ts). */
  finish(effect: EffectRow, outcome: EffectOutcome, writes: FinishWrite[]): Promise<void>
  /** Runs each effect, its outcome's commit included, in the trace context stored with it. */
  trace: TraceHooks
}

/**
 * Runs effects after commit. Each is claimed first (SKIP LOCKED, with a lease renewed while the
 * handler runs; effects just committed by this runtime are written claimed), so one effect runs
 * at most once at a time across ticks, processes and nodes; a lease left by a dead worker
 * expires and another worker takes the effect over. Success reports the handler's event; a
 * failure retries with back-off, then reports `<kind>.failed`.
 */
export function createEffectWorker(o: EffectWorkerOptions) {
  const { pool, logger, owner, leaseMs } = o
  const running = new Set<string>()

  const finish = (effect: EffectRow, outcome: Omit<EffectOutcome, 'owner'>, writes: FinishWrite[] = []) => o.finish(effect, { owner, ...outcome }, writes)

  async function run(effect: EffectRow): Promise<void> {
    if (running.has(effect.id) || o.isStopped()) return
    running.add(effect.id)
    return o.trace.within(effect.trace ?? null, `effect ${effect.kind}`, { 'effect.id': effect.id, 'actor.id': effect.actorId, 'effect.attempt': effect.attempts + 1, 'node.id': owner }, () => runHeld(effect))
  }

  async function runHeld(effect: EffectRow): Promise<void> {
    const renew = setInterval(() => {
      // A stopped runtime holds nothing any more: its leases run out and another worker takes over.
      if (o.isStopped()) return clearInterval(renew)
      void effects.renewLease(pool, effect.id, { owner, leaseMs }).then(
        (held) => held || logger.warn({ effectId: effect.id }, 'effect lease lost while running; its result will be discarded'),
        (err) => logger.warn({ err, effectId: effect.id }, 'effect lease renewal failed'),
      )
    }, Math.max(50, Math.floor(leaseMs / 3)))
    renew.unref()
    try {
      const handler = o.handlers[effect.kind]
      if (!handler) throw new Error(`No handler for effect ${effect.kind}`)
      const writes: FinishWrite[] = []
      const finishWith = (write: FinishWrite) => void writes.push(write)
      const event = await runInEffectScope({ actorId: effect.actorId, finishWith }, () => handler(effect, {
        record: (u) => effects.recordEffectProgress(pool, effect.id, u),
        finishWith,
        actor: () => o.loadActor(effect.actorId),
        async context<T>() {
          const actor = await o.loadActor(effect.actorId)
          if (!actor) throw new Error(`actor ${effect.actorId} of effect ${effect.id} not found`)
          return actor.snapshot.context as T
        },
      }))
      await finish(effect, { status: 'done', event: event ? { ...event, effectId: effect.id } : null }, writes)
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      if (!o.persistent.has(effect.kind) && effect.attempts + 1 >= o.maxAttempts) {
        logger.error({ err, effectId: effect.id }, 'effect failed for good')
        const giveUp = o.handlers[effect.kind]?.giveUp?.(effect)
        await finish(effect, { status: 'failed', event: { type: `${effect.kind}.failed`, effectId: effect.id, error: message }, error: message }, giveUp ? [giveUp] : [])
      } else {
        const delayMs = Math.min(30_000, 200 * 2 ** effect.attempts)
        logger.warn({ err, effectId: effect.id, delayMs }, 'effect failed; will retry')
        await effects.deferEffect(pool, effect.id, { owner, delayMs, error: message })
      }
    } finally {
      clearInterval(renew)
      running.delete(effect.id)
    }
  }

  return {
    /** Claims the open effects due for a (re)try of the actors in `shards` (null: all) this node holds, left by a crash or deferred, at most `limit`, and runs them; answers how many. */
    async claimAndRun(shards: number[] | null, limit?: number): Promise<number> {
      if (o.isStopped()) return 0
      const claimed = await effects.claimEffects(pool, { owner, leaseMs, scope: { shards, node: owner }, ...(limit ? { limit } : {}) })
      claimed.forEach((e) => void o.track(run(e)))
      return claimed.length
    },
    /** Runs effects this runtime committed already claimed. */
    runClaimed(claimed: EffectRow[]): void {
      claimed.forEach((e) => void o.track(run(e)))
    },
  }
}
