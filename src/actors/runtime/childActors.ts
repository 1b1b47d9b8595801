import { z } from 'zod'
import type { AnyEventObject } from 'xstate'
import type pg from 'pg'
import { SPAWN_CHILD, type ActorEntry, type ActorKind, type CreateArgs, type EffectHandler } from './actorKind.ts'
import { actorEnded, enqueue, type Notify } from './actorStore.ts'
import { runSqlWrite, type SqlWrite } from './sql.ts'
import type { EffectScope } from './effectScope.ts'
import { pureInitialTransition } from './pureTransition.ts'

export { SPAWN_CHILD }
export type SpawnChildParams = { kind: string; key: string; input: unknown }

/** A child's stable id: its parent's id and the key the parent gave it. */
export const childIdOf = (parentId: string, key: string) => `${parentId}:${key}`

/** What a parent receives when a child ends; a parent kind adds it to its event schema. */
export const childEndEventSchema = z.object({
  type: z.enum(['child.done', 'child.failed']),
  childId: z.string(),
  key: z.string(),
  status: z.string(),
  output: z.unknown(),
  /** When the child ended (absent in events stored before it was kept). */
  at: z.string().optional(),
})
export type ChildEndEvent = z.infer<typeof childEndEventSchema>

/**
 * The `child.done` / `child.failed` event for a child's parent (unless its kind says the parent
 * did not ask, `tellsParent`), and for the actors its kind names as watchers, once the child is
 * final (none otherwise); deduplicated in each one's inbox by the child's id (and the watcher's).
 */
export function childEnd(entry: ActorEntry): Notify[] {
  if (!entry.parentId || entry.snapshot.status !== 'done') return []
  const failed = entry.kind.isFailure ? entry.kind.isFailure(entry.snapshot) : entry.status === 'failed'
  const event: ChildEndEvent = {
    type: failed ? 'child.failed' : 'child.done',
    childId: entry.id,
    // A child named by its parent's key (`childIdOf`), or one with an id of its own (a wallet operation).
    key: entry.id.startsWith(`${entry.parentId}:`) ? entry.id.slice(entry.parentId.length + 1) : entry.id,
    status: entry.status,
    output: entry.snapshot.output ?? null,
    at: new Date().toISOString(),
  }
  const watchers = entry.kind.watchersOf?.(entry.snapshot) ?? []
  const toParent = entry.kind.tellsParent?.(entry.snapshot) ?? true
  return [
    ...(toParent ? [{ actorId: entry.parentId, event, dedupeKey: `child:${entry.id}` }] : []),
    ...watchers.filter((w) => w !== entry.parentId).map((w) => ({ actorId: w, event, dedupeKey: `child:${entry.id}:${w}` })),
  ]
}

/** The built-in `actor.spawn` effect: creates the child under its stable id; a retry finds it there. */
export function spawnChildHandler(create: (kind: string, args: { id: string; accountId: string; input: unknown; parentId: string }) => Promise<unknown>): EffectHandler {
  return async (effect) => {
    const p = effect.params as SpawnChildParams
    await create(p.kind, { id: childIdOf(effect.actorId, p.key), accountId: effect.accountId, input: p.input, parentId: effect.actorId }).catch((err) => {
      if ((err as { code?: string }).code !== '23505') throw err
    })
    return null
  }
}

type ChildArgs = Omit<CreateArgs, 'parentId'> & { parentId: string }

/**
 * Creates a child of the running effect's actor (`scope`, see effectScope.ts) with that effect's
 * outcome: in the statement that commits the parent's transition on it (its insert as more
 * branches of that commit: the child exists exactly when the parent recorded it), or, when the
 * outcome cannot be applied at once (it goes to the parent's inbox, to be applied in order), in
 * that transaction, and not at all when the parent has ended. `first`, if given, is its first
 * event, in its inbox from the same commit (that takes the transaction). Answers the child as it
 * will be created (it is not yet).
 */
export function childWithOutcome(
  rt: {
    create(kindName: string, args: ChildArgs, db: pg.PoolClient): Promise<ActorEntry>
    describe(kindName: string, args: ChildArgs): { write: SqlWrite; afterCommit(): void } | undefined
    kindOf(name: string): ActorKind
    afterExternalCommit(entry: ActorEntry): void
    drain(id: string): void
  },
  scope: EffectScope,
  kindName: string,
  args: ChildArgs,
  first?: AnyEventObject,
) {
  const inTransaction = async (tx: pg.PoolClient) => {
    // A parent that ended meanwhile (a turn that another call's failure ended) would never record
    // the child: none is created, and what was reserved for it is given back (the kind's `unstarted`).
    if (await actorEnded(tx, args.parentId)) {
      const giveBack = rt.kindOf(kindName).unstarted?.([args.id])
      if (giveBack) await runSqlWrite(tx, giveBack)
      return
    }
    const entry = await rt.create(kindName, args, tx)
    if (first) await enqueue(tx, { actorId: entry.id, accountId: entry.accountId, event: first, dedupeKey: `first:${entry.id}` })
    return () => {
      rt.afterExternalCommit(entry)
      if (first) rt.drain(entry.id)
    }
  }
  const described = first ? undefined : rt.describe(kindName, args)
  scope.finishWith(described ? { ...described.write, afterCommit: described.afterCommit, inTransaction } : inTransaction)
  const kind = rt.kindOf(kindName)
  const [snapshot] = pureInitialTransition(kind.machine, args.input)
  return { id: args.id, accountId: args.accountId, kind, status: kind.statusOf(snapshot), snapshot }
}
