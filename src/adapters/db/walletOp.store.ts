import type pg from 'pg'
import { OperationInProgressError } from '../../domain/errors.ts'
import { withTransaction } from './transaction.ts'
import type { Queryable, SqlWrite } from '../../actors/runtime/index.ts'
import { actorRowsSql } from '../../actors/runtime/index.ts'

type Db = Pick<pg.Pool, 'query'> | pg.PoolClient

/** The runtime's actor rows (src/actors/runtime/sqlApi.ts): an operation's actor is the one of the row's id. */
const ACTORS = actorRowsSql()

/**
 * The record of an agent's money moves (`wallet_op`): one row per wallet operation or
 * self-funded launch seed, with the USD value it counts toward the agent's 24-hour spend. The
 * row's id is its actor's: when that actor fails, the spend no longer counts (nor when no actor
 * ever came of it: see COUNTED_SQL).
 */

/**
 * Records that a money move of an agent is about to spend `usdValue`, after `checkSpend` has
 * accepted it against the agent's 24-hour spend. Check and record run under one advisory lock
 * per agent, so concurrent requests of one agent cannot all pass the same check. Recording the
 * same id twice keeps the first record (a record still without its actor counts again from
 * now), and a retry's check does not count its own earlier row. `after` writes in the same
 * transaction (the operation's actor), so the record and the actor commit together or not at
 * all; without it (a child created with its parent's step, see src/actors/runtime/effectScope.ts) the
 * actor follows in the transaction that records the step's outcome.
 *
 * @example
 * await reserveSpend(pool, { id: opId, accountId, agentId, kind: 'swap', usdValue: '250.00', checkSpend: (spent) => checkPolicy(policy, { ...move, spentTodayUsd: spent }) })
 */
export async function reserveSpend<T = void>(
  pool: pg.Pool,
  input: {
    id: string
    accountId: string
    agentId: string
    kind: string
    usdValue: string
    checkSpend?: ((spentTodayUsd: string) => void) | undefined
    /** More checks to make under the same lock (e.g. one claim in flight per agent). */
    before?: ((db: pg.PoolClient) => Promise<void>) | undefined
    /** What to write with the record, in its transaction (the operation's actor). */
    after?: ((db: pg.PoolClient) => Promise<T>) | undefined
    /** The actor the move is made for (a chat turn, a run, an automation): its budget, if it has one, counts this row. */
    parentId?: string | null | undefined
  },
): Promise<T> {
  return withTransaction(pool, async (db) => {
    await db.query('select pg_advisory_xact_lock(hashtext($1))', [input.agentId])
    await input.before?.(db)
    input.checkSpend?.(await spentTodayUsd(db, input.agentId, { exceptId: input.id }))
    // Reserved again by a retry whose first attempt left it without an actor: it counts from now.
    await db.query(
      `insert into wallet_op (id, account_id, agent_id, kind, usd_value, parent_id) values ($1, $2, $3, $4, $5, $6)
       on conflict (id) do update set created_at = now() where not exists (select 1 from ${ACTORS} x where x.id = wallet_op.id)`,
      [input.id, input.accountId, input.agentId, input.kind, input.usdValue, input.parentId ?? null],
    )
    return (await input.after?.(db)) as T
  })
}

/**
 * Whether a `wallet_op` row `w` (its actor `x`, left-joined from the runtime's `actorRowsSql`) counts as spent: its operation did
 * not fail. A move whose actor is not created yet counts (a launch seed is recorded just before
 * its actor; a parent's step reserves, then creates its child with its outcome), for 10 minutes
 * after it was last reserved: one still without an actor then was abandoned (its step died and
 * was not retried, or ended without it), and nothing will move funds for it unless a retry
 * reserves it again.
 */
export const COUNTED_SQL = `(case when x.id is null then w.created_at > now() - interval '10 minutes' else x.status <> 'failed' end)`

/**
 * USD spent by an agent's money moves in the last 24 hours: wallet operations and self-funded
 * launch seeds, failed and abandoned ones excluded (see COUNTED_SQL).
 */
export async function spentTodayUsd(db: Db, agentId: string, { exceptId = '' }: { exceptId?: string } = {}): Promise<string> {
  const { rows } = await db.query<{ usd: string }>(
    `select coalesce(sum(w.usd_value), 0)::text as usd from wallet_op w left join ${ACTORS} x on x.id = w.id
      where w.agent_id = $1 and w.id <> $2 and w.created_at > now() - interval '24 hours' and ${COUNTED_SQL}`,
    [agentId, exceptId],
  )
  return rows[0]?.usd ?? '0'
}

/**
 * Refuses (409 `<kind>_in_progress`) when another operation of this kind of the agent is not
 * finished. Made under the agent's lock when an `exclusive` operation starts; callers may also
 * ask early, before planning, for a quicker answer. A row without an actor (a launch seed about
 * to start, a child about to be created with its parent's step) counts as in flight for a
 * minute after it was last reserved.
 */
export async function assertNoneInFlight(db: Db, { agentId, kind, exceptId = '' }: { agentId: string; kind: string; exceptId?: string }): Promise<void> {
  const { rowCount } = await db.query(
    `select 1 from wallet_op w left join ${ACTORS} x on x.id = w.id
      where w.agent_id = $1 and w.kind = $2 and w.id <> $3
        and (x.id is null and w.created_at > now() - interval '1 minute' or x.status not in ('confirmed', 'failed'))
      limit 1`,
    [agentId, kind, exceptId],
  )
  if (rowCount) throw new OperationInProgressError({ kind })
}

/**
 * Gives back the spend recorded for operations whose actor was never created (a step of a parent
 * reserved, then ended without starting its child: see effectScope.ts), sent with that step's
 * outcome: an operation that will not run no longer counts toward the agent's 24-hour spend.
 */
export function releaseUnstartedWrite(ids: readonly string[]): SqlWrite {
  return {
    name: 'walletop.release-unstarted',
    with: [{ as: 'wallet_op_released', sql: `delete from wallet_op w where w.id = any($1::text[]) and not exists (select 1 from ${ACTORS} x where x.id = w.id)` }],
    values: [ids],
  }
}

/**
 * USD spent by money moves over rolling windows, per agent and per account (an owner's policy's
 * `net_usd_window`): each window's sum as the daily cap counts it (failed and abandoned moves
 * left out, COUNTED_SQL), `exceptId`'s own record left out; one statement for every window.
 * Keyed as asked (`key`).
 */
export async function spentInWindowsUsd(
  db: Queryable,
  { agentId, accountId, exceptId = '', windows }: { agentId: string; accountId: string; exceptId?: string; windows: ReadonlyArray<{ key: string; scope: 'agent' | 'account'; windowSeconds: number }> },
): Promise<Record<string, string>> {
  if (windows.length === 0) return {}
  const longest = Math.max(...windows.map((w) => w.windowSeconds))
  const sums = windows.map((w, i) =>
    `coalesce(sum(w.usd_value) filter (where w.created_at > now() - ${Math.trunc(w.windowSeconds)} * interval '1 second'${w.scope === 'agent' ? ' and w.agent_id = $4::uuid' : ''}), 0)::text as w${i}`)
  const byAgent = windows.some((w) => w.scope === 'agent')
  const { rows } = await db.query<Record<string, string>>(
    `select ${sums.join(', ')} from wallet_op w left join ${ACTORS} x on x.id = w.id
      where w.account_id = $1 and w.id <> $2 and w.created_at > now() - $3 * interval '1 second' and ${COUNTED_SQL}`,
    byAgent ? [accountId, exceptId, longest, agentId] : [accountId, exceptId, longest],
  )
  return Object.fromEntries(windows.map((w, i) => [w.key, rows[0]?.[`w${i}`] ?? '0']))
}
