import type pg from 'pg'
import type { LocalAccount, TransactionReceipt } from 'viem'
import type { Logger } from '../logger.ts'
import type { EffectHandler, EffectRow } from '../actors/actorKind.ts'
import type { ActorRuntime } from '../actors/actorRuntime.ts'
import type { WalletOpInput } from '../actors/walletOp.machine.ts'
import { NotFoundError, OperationInProgressError, ServiceError } from '../domain/errors.ts'
import type { ChainHandle } from './chain.ts'
import type { PlannedTx, TxSender } from './txSender.ts'
import { withTransaction } from '../db/transaction.ts'

/**
 * What a kind of wallet operation contributes: its transactions for the wallet's next nonce,
 * and what the receipts mean (e.g. the amount a swap actually received).
 */
export type WalletOpPlanner = {
  plan(input: { params: Record<string, unknown>; account: LocalAccount; firstNonce: number; chain: ChainHandle }): PlannedTx[]
  outcome?(input: {
    params: Record<string, unknown>
    account: LocalAccount
    receipts: TransactionReceipt[]
    chain: ChainHandle
  }): Promise<Record<string, unknown>>
}

export type WalletOpsDeps = {
  pool: pg.Pool
  chain: ChainHandle
  sender: TxSender
  loadAccount(agentId: string): Promise<LocalAccount>
  planners: Record<string, WalletOpPlanner>
  logger: Logger
}

const rejected = (code: string, message: string) => ({ type: 'op.rejected', error: { code, message } })

/** The effects of the wallet operation machine; each is safe to run twice. */
export function createWalletOpEffects(deps: WalletOpsDeps): Record<string, EffectHandler> {
  const { pool, chain, sender } = deps

  async function context(effect: EffectRow): Promise<WalletOpInput> {
    const { rows } = await pool.query<{ ctx: WalletOpInput }>(`select snapshot->'context' as ctx from actor where id = $1`, [effect.actorId])
    if (!rows[0]) throw new Error(`wallet operation ${effect.actorId} not found`)
    return rows[0].ctx
  }
  const planner = (kind: string) => {
    const p = deps.planners[kind]
    if (!p) throw new Error(`no planner for wallet operation ${kind}`)
    return p
  }

  return {
    async 'op.submit'(effect) {
      const ctx = await context(effect)
      const account = await deps.loadAccount(ctx.agentId)
      try {
        const sent = await sender.send(
          { id: effect.id, accountId: ctx.accountId, agentId: ctx.agentId, effectId: effect.id, account },
          (firstNonce) => planner(ctx.kind).plan({ params: ctx.params, account, firstNonce, chain }),
        )
        return { type: 'op.submitted', txHash: sent.at(-1)!.hash }
      } catch (err) {
        if (err instanceof ServiceError && err.status < 500) return rejected(err.code, err.message)
        throw err
      }
    },

    async 'op.confirm'(effect) {
      const ctx = await context(effect)
      const account = await deps.loadAccount(ctx.agentId)
      const receipts = await sender.confirmRequest((effect.params as { txHash: `0x${string}` }).txHash, account)
      const last = receipts.at(-1)!
      if (last.status !== 'success') {
        return rejected('transaction_reverted', `Transaction ${last.transactionHash} reverted on chain; nothing moved but gas.`)
      }
      const base = { txHash: last.transactionHash, gasUsed: receipts.reduce((s, r) => s + r.gasUsed, 0n).toString(), blockNumber: last.blockNumber.toString() }
      const extra = (await planner(ctx.kind).outcome?.({ params: ctx.params, account, receipts, chain })) ?? {}
      return { type: 'op.confirmed', result: { ...base, ...extra } }
    },
  }
}

/**
 * The actor under `opId` read as a wallet operation (swap, transfer and claim adapters look a
 * retried request's operation up this way): `opKind` is undefined when the actor is not one.
 */
export async function findWalletOp<P>(runtime: Pick<ActorRuntime, 'get'>, opId: string) {
  const entry = await runtime.get(opId)
  if (!entry) return undefined
  const ctx = entry.snapshot.context as WalletOpInput & { params: P }
  const opKind = entry.kind.kind === 'walletop' ? ctx.kind : undefined
  return { accountId: entry.accountId, opKind, agentId: ctx.agentId, params: ctx.params, view: walletOpView(entry) }
}

/** The operation as the API shows it: status, transaction hash, and the planner's result. */
export function walletOpView(entry: { id: string; status: string; snapshot: { context: unknown } }) {
  const c = entry.snapshot.context as WalletOpInput & {
    txHash: string | null
    result: Record<string, unknown> | null
    error: { code: string; message: string } | null
  }
  return {
    id: entry.id,
    agentId: c.agentId,
    kind: c.kind,
    status: entry.status,
    txHash: c.txHash,
    ...(c.result ?? {}),
    error: c.error,
  }
}

/** What starting a wallet operation takes: the machine's input plus the checks made under the agent's lock. */
export type WalletOpStart = WalletOpInput & {
  /** USD value recorded toward the agent's 24-hour spend. */
  usdValue: string
  /** Called with the agent's spend so far, under the lock; throws to refuse. */
  checkSpend?: ((spentTodayUsd: string) => void) | undefined
  /** At most one operation of this kind per agent in flight (a fee claim): else 409 `<kind>_in_progress`. */
  exclusive?: boolean | undefined
  /** Writes made in the transaction that records the operation, under the lock (e.g. consuming a quote); throws to refuse. */
  claim?: ((db: pg.PoolClient) => Promise<void>) | undefined
  /** The actor the operation is started for (a chat turn, a run): it becomes its child and hears its end. */
  parentId?: string | undefined
}

/**
 * Refuses (409 `<kind>_in_progress`) when another operation of this kind of the agent is not
 * finished. Made under the agent's lock when an `exclusive` operation starts; callers may also
 * ask early, before planning, for a quicker answer. An operation whose row is written but whose
 * actor is not created yet (the moment between the two, or a crash there) counts as in flight
 * for a minute; a retry with its idempotency key creates it.
 */
export async function assertNoneInFlight(
  db: Pick<pg.Pool, 'query'> | pg.PoolClient,
  { agentId, kind, exceptId = '' }: { agentId: string; kind: string; exceptId?: string },
): Promise<void> {
  const { rowCount } = await db.query(
    `select 1 from wallet_op w left join actor x on x.id = w.id
      where w.agent_id = $1 and w.kind = $2 and w.id <> $3
        and (x.id is null and w.created_at > now() - interval '1 minute' or x.status not in ('confirmed', 'failed'))
      limit 1`,
    [agentId, kind, exceptId],
  )
  if (rowCount) {
    throw new OperationInProgressError({ kind })
  }
}

/**
 * Starts a wallet operation (id from the idempotency key, so a retry finds it) and waits for
 * it to end, up to `waitMs`; answers with whatever state it reached. The spend reservation, the
 * caller's claim (a quote consumed) and the actor are written in one transaction: an operation
 * is recorded with its actor or not at all. With `parentId` (a chat turn, a run) the operation
 * is that actor's child, which hears its end in its inbox: nothing waits here.
 *
 * @example
 * const op = await runWalletOp({ pool, runtime }, { opId, accountId, agentId, kind: 'transfer', params, usdValue: '12.50' })
 */
export async function runWalletOp(
  { pool, runtime }: { pool: pg.Pool; runtime: ActorRuntime },
  input: WalletOpStart,
  { waitMs = 20_000 }: { waitMs?: number } = {},
) {
  const existing = await runtime.get(input.opId)
  if (existing && (existing.accountId !== input.accountId || existing.kind.kind !== 'walletop')) throw new NotFoundError('Operation')
  if (!existing) await createWalletOp({ pool, runtime }, input)
  // Woken by the runtime's commits of this operation, not by reading it in a loop.
  const entry = await runtime.waitFor(input.opId, walletOpEnded, input.parentId ? 0 : waitMs)
  if (!entry) throw new NotFoundError('Operation')
  return walletOpView(entry)
}

/** Reserves the spend (under the agent's lock) and creates the operation's actor in the same transaction; a concurrent twin's creation wins. */
async function createWalletOp({ pool, runtime }: { pool: pg.Pool; runtime: ActorRuntime }, input: WalletOpStart): Promise<void> {
  const { usdValue: _, checkSpend: __, exclusive: ___, claim: ____, parentId = null, ...machineInput } = input
  try {
    const entry = await reserveSpend(pool, {
      id: input.opId, accountId: input.accountId, agentId: input.agentId, kind: input.kind, usdValue: input.usdValue,
      checkSpend: input.checkSpend,
      before: async (db) => {
        if (input.exclusive) await assertNoneInFlight(db, { agentId: input.agentId, kind: input.kind, exceptId: input.opId })
        await input.claim?.(db)
      },
      after: (db) => runtime.create('walletop', { id: input.opId, accountId: input.accountId, input: machineInput, parentId }, db),
    })
    runtime.afterExternalCommit(entry)
  } catch (err) {
    // The same operation created at the same moment by a twin request: that one stands.
    if ((err as { code?: string }).code !== '23505') throw err
  }
}

/** A wallet operation has ended: confirmed or failed. */
export const walletOpEnded = (entry: { status: string }) => entry.status === 'confirmed' || entry.status === 'failed'

/**
 * Records that a money move of an agent is about to spend `usdValue`, after `checkSpend` has
 * accepted it against the agent's 24-hour spend. Check and record run under one advisory lock
 * per agent, so concurrent requests of one agent cannot all pass the same check. The row's id
 * is the actor's (a wallet operation's, or a self-funded launch's): when that actor fails, the
 * spend no longer counts. Recording the same id twice is a no-op, and a retry's check does not
 * count its own earlier row.
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
  },
): Promise<T> {
  return withTransaction(pool, async (db) => {
    await db.query('select pg_advisory_xact_lock(hashtext($1))', [input.agentId])
    await input.before?.(db)
    input.checkSpend?.(await spentTodayUsd(db, input.agentId, { exceptId: input.id }))
    await db.query(
      `insert into wallet_op (id, account_id, agent_id, kind, usd_value) values ($1, $2, $3, $4, $5) on conflict (id) do nothing`,
      [input.id, input.accountId, input.agentId, input.kind, input.usdValue],
    )
    return (await input.after?.(db)) as T
  })
}

/**
 * USD spent by an agent's money moves in the last 24 hours: wallet operations and self-funded
 * launch seeds, failed ones excluded.
 */
export async function spentTodayUsd(
  db: Pick<pg.Pool, 'query'> | pg.PoolClient,
  agentId: string,
  { exceptId = '' }: { exceptId?: string } = {},
): Promise<string> {
  // A move whose actor is not created yet counts: it is about to spend.
  const { rows } = await db.query<{ usd: string }>(
    `select coalesce(sum(w.usd_value), 0)::text as usd from wallet_op w left join actor x on x.id = w.id
      where w.agent_id = $1 and w.id <> $2 and w.created_at > now() - interval '24 hours' and coalesce(x.status, '') <> 'failed'`,
    [agentId, exceptId],
  )
  return rows[0]?.usd ?? '0'
}
