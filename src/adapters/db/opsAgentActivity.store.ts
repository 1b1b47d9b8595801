import type pg from 'pg'
import { formatUnits } from 'viem'
import { isoTimestamp as iso } from '../../domain/util/isoTimestamp.ts'
import type { AgentOperation, OperationsCursor } from '../../domain/ops/ports.ts'

type OperationRow = {
  id: string
  kind: string
  status: string
  ctx: Record<string, unknown>
  usd: string | null
  parent_id: string | null
  parent_kind: string | null
  parent_status: string | null
  created_at: string | Date
  created_text: string
  updated_at: string | Date
}

/** A launch's parameters and outcome, read from its context as an operation's `params` and `result`. */
function launchParts(c: Record<string, unknown>) {
  const pick = (keys: string[]) => Object.fromEntries(keys.filter((k) => c[k] !== undefined).map((k) => [k, c[k]]))
  const done = c.tokenAddress !== null && c.tokenAddress !== undefined
  return { params: pick(['venue', 'symbol', 'name', 'quote', 'seedAmount']), result: done ? pick(['tokenAddress', 'poolAddress', 'blockNumber']) : null }
}

type Amount = { amount: string; symbol: string | null; token: string | null }
type TokenInfo = { address?: string; symbol?: string; decimals?: number }
const units = (v: unknown, info: TokenInfo | undefined): Amount | null =>
  typeof v === 'string' && /^[0-9]+$/.test(v) && info?.decimals !== undefined
    ? { amount: formatUnits(BigInt(v), info.decimals), symbol: info.symbol ?? null, token: info.address ?? null }
    : null

/**
 * What moved, as a person reads it (decimal amounts with their symbol): a swap's `in` and `out`
 * (received once confirmed, else expected), an ETH transfer's `out`, a launch's seed. An ERC-20
 * transfer names its token address and base units (the operation does not record the decimals).
 */
function amountsOf(kind: string, params: Record<string, unknown>, result: Record<string, unknown> | null): { in: Amount | null; out: Amount | null } {
  if (kind === 'swap') {
    const tin = params.tokenInInfo as TokenInfo | undefined
    const tout = params.tokenOutInfo as TokenInfo | undefined
    return { in: units(params.amountIn, tin), out: units(result?.amountOutBaseUnits ?? params.expectedAmountOut, tout) }
  }
  if (kind === 'transfer') {
    const native = params.native === true
    const out = native ? units(params.amount, { symbol: 'ETH', decimals: 18 }) : { amount: String(params.amount), symbol: null, token: String(params.token) }
    return { in: null, out }
  }
  if (kind === 'launch' && typeof params.seedAmount === 'string') return { in: null, out: { amount: params.seedAmount, symbol: String(params.quote), token: null } }
  return { in: null, out: null }
}

function operationView(r: OperationRow): AgentOperation {
  const c = r.ctx
  const launch = r.kind === 'launch'
  const { params, result } = launch ? launchParts(c) : { params: (c.params ?? {}) as Record<string, unknown>, result: (c.result ?? null) as Record<string, unknown> | null }
  const kind = launch ? 'launch' : String(c.kind)
  return {
    id: r.id,
    /** `swap`, `transfer`, `claim` (a wallet operation's planner), or `launch`. */
    kind,
    actorKind: r.kind,
    status: r.status,
    usdValue: r.usd,
    txHash: (c.txHash ?? null) as string | null,
    amounts: amountsOf(kind, params, result),
    params,
    result,
    error: (c.error ?? null) as { code: string; message: string } | null,
    /** The chat turn, run or automation that started it; null for a request of the owner's. */
    startedBy: r.parent_id ? { id: r.parent_id, kind: r.parent_kind, status: r.parent_status } : null,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  }
}

/**
 * One agent's wallet operations (swaps, transfers, fee claims) and launches, newest first, each
 * with what started it; one more row than `limit` tells the caller a next page exists, `cursor`
 * where it starts (the `actor_named_agent` index).
 *
 * @example
 * const { operations, next } = await agentOperations(pool, agentId, { limit: 20 })
 */
export async function agentOperations(pool: pg.Pool, agentId: string, { limit, before }: { limit: number; before?: OperationsCursor | undefined }) {
  const params: unknown[] = [agentId, limit + 1]
  const after = before ? `and (x.created_at, x.id) < ($3::timestamptz, $4)` : ''
  if (before) params.push(before.createdAt, before.id)
  const { rows } = await pool.query<OperationRow>(
    `select x.id, x.kind, x.status, x.snapshot->'context' as ctx, w.usd_value::text as usd, p.id as parent_id, p.kind as parent_kind,
            p.status as parent_status, x.created_at, x.created_at::text as created_text, x.updated_at
       from actor x left join wallet_op w on w.id = x.id left join actor p on p.id = coalesce(x.parent_id, w.parent_id)
      where x.snapshot->'context'->>'agentId' = $1 and x.kind in ('walletop', 'launch') ${after}
      order by x.created_at desc, x.id desc limit $2`,
    params,
  )
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return { operations: page.map(operationView), next: rows.length > limit && last ? { createdAt: last.created_text, id: last.id } : null }
}

/** The parent a wallet operation records (the chat turn, run or automation that started it), by operation id. */
export async function walletOpParents(pool: pg.Pool, ids: string[]): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ id: string; parent_id: string }>('select id, parent_id from wallet_op where id = any($1::text[]) and parent_id is not null', [ids])
  return new Map(rows.map((r) => [r.id, r.parent_id]))
}
