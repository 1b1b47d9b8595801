import { timerRows, type CommitParams, type Queryable } from './actorRows.ts'
import { preparedName, shiftedBranches, shiftParams, type SqlGuard, type SqlWrite } from './sql.ts'

/**
 * A write that goes out in the same statement as an actor's insert (a chat turn's user message):
 * more branches of its WITH, so both are written or neither, with no transaction around them.
 */
export type AlongsideWrite = SqlWrite

export type InsertActorParams = Omit<CommitParams, 'expectedVersion' | 'inboxSeq' | 'timerDeletes' | 'notify' | 'requireEmptyInbox'> & {
  kind: string
  accountId: string
  machineVersion: number
  parentId?: string | null
  alongside?: AlongsideWrite | undefined
  /** A condition the insert must meet (see SqlGuard): the actor, its journal, effects, timers and the write alongside are made only then. */
  guard?: SqlGuard | undefined
}

/** The insert's own parameters: $1 to $15. */
const INSERT_PARAMS = 15

/**
 * A new actor's insert (its row, its journal's first row, effects, timers and any write alongside)
 * as a write described rather than run, its branches named with `prefix`: run alone by
 * `insertActor`, or sent as more branches of another statement (a parent's commit that records
 * the child, see `childActors.ts`). The row is made only when the guard holds, and `onlyIf` (a
 * condition of the same form, which refuses by making nothing rather than raising) too.
 */
export function insertActorWrite(p: InsertActorParams, prefix = '', onlyIf?: { sql: string; values: unknown[] }): SqlWrite {
  const ins = `${prefix}ins`
  const conditions: string[] = []
  const extra: unknown[] = []
  for (const c of [p.guard, onlyIf]) {
    if (!c) continue
    conditions.push(`(${shiftParams(c.sql, INSERT_PARAMS + extra.length)})`)
    extra.push(...c.values)
  }
  const own: SqlWrite = {
    name: `actor.insert${p.guard ? `?${p.guard.name}` : ''}`,
    with: [
      {
        as: ins,
        sql: `insert into actor (id, kind, account_id, machine_version, status, state_value, snapshot, timers, version, parent_id)
       ${conditions.length > 0 ? `select $1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::jsonb, 1, $12 where ${conditions.join(' and ')}` : `values ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::jsonb, 1, $12)`}
       returning id, account_id, version, created_at`,
      },
      {
        as: `${prefix}j`,
        sql: `insert into actor_journal (actor_id, seq, account_id, event, state_value, trace)
       select id, version, account_id, $9::jsonb, $6::jsonb, $15::text from ${ins}`,
      },
      {
        as: `${prefix}ef`,
        sql: `insert into effect (id, actor_id, account_id, kind, params, status, claimed_by, lease_until, trace)
       select e.id, ${ins}.id, ${ins}.account_id, e.kind, e.params, 'pending', $13::text,
              case when $13::text is null then null else clock_timestamp() + $14::bigint * interval '1 millisecond' end, e.trace
         from ${ins}, jsonb_to_recordset($10::jsonb) as e(id text, kind text, params jsonb, trace text)`,
      },
      {
        as: `${prefix}tm`,
        sql: `insert into actor_timer (actor_id, timer_key, account_id, generation, due_at, event)
       select ${ins}.id, t.key, ${ins}.account_id, t.generation, now() + t.delay_ms * interval '1 millisecond', t.event
         from ${ins}, jsonb_to_recordset($11::jsonb) as t(key text, generation bigint, delay_ms bigint, event jsonb)`,
      },
    ],
    values: [
      p.id,
      p.kind,
      p.accountId,
      p.machineVersion,
      p.status,
      JSON.stringify(p.stateValue),
      JSON.stringify(p.snapshot),
      JSON.stringify(p.timers),
      JSON.stringify(p.event),
      JSON.stringify(p.effects),
      JSON.stringify(timerRows(p.timerUpserts)),
      p.parentId ?? null,
      p.claim?.owner ?? null,
      p.claim?.leaseMs ?? null,
      p.trace ?? null,
      ...extra,
    ],
  }
  if (!p.alongside) return own
  const more = shiftedBranches([p.alongside], own.values.length)
  return { name: `actor.insert+${p.alongside.name}${p.guard ? `?${p.guard.name}` : ''}`, with: [...own.with, ...more.branches], values: [...own.values, ...more.values] }
}

/** Inserts a new actor (with its journal's first row, effects, timers and any write alongside) in one statement; answers when its row was created (the database's clock). */
export async function insertActor(db: Queryable, p: InsertActorParams): Promise<Date> {
  const w = insertActorWrite(p)
  const { rows } = await db.query<{ created_at: Date }>({
    name: preparedName(w.name),
    text: `with ${w.with.map((b) => `${b.as} as (${b.sql})`).join(',\n')}\nselect created_at from ins`,
    values: w.values,
  })
  if (!rows[0]) throw new Error(`actor ${p.id}: its insert's guard ${p.guard?.name} refused without raising`)
  return rows[0].created_at
}

