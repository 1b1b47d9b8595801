import { formatUnits } from 'viem'
import { NotFoundError } from '../errors.ts'
import type { AgentOperation, OperationsCursor, OpsPorts } from './ports.ts'

/** An operation's actor as the runtime reads it, with the USD value its record holds and its parent. */
type OperationActor = {
  id: string
  kind: string
  status: string
  context: Record<string, unknown>
  usdValue: string | null
  parent: { id: string; kind: string; status: string } | null
  createdAt: string
  updatedAt: string
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

/** An operation's actor (a wallet operation or a launch) as the console lists it, with its recorded USD value and what started it. */
export function operationView(r: OperationActor): AgentOperation {
  const c = r.context
  const launch = r.kind === 'launch'
  const { params, result } = launch ? launchParts(c) : { params: (c.params ?? {}) as Record<string, unknown>, result: (c.result ?? null) as Record<string, unknown> | null }
  const kind = launch ? 'launch' : String(c.kind)
  return {
    id: r.id,
    /** `swap`, `transfer`, `claim` (a wallet operation's planner), or `launch`. */
    kind,
    actorKind: r.kind,
    status: r.status,
    usdValue: r.usdValue,
    txHash: (c.txHash ?? null) as string | null,
    amounts: amountsOf(kind, params, result),
    params,
    result,
    error: (c.error ?? null) as { code: string; message: string } | null,
    /** The chat turn, run or automation that started it; null for a request of the owner's. */
    startedBy: r.parent,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  }
}

export type ListAgentOperationsDeps = Pick<OpsPorts, 'runtime' | 'store'>
export type ListAgentOperationsInput = { agentId: string; limit: number; before?: OperationsCursor | undefined }

/**
 * One agent's wallet operations (swaps, transfers, fee claims) and launches, newest first, each
 * with what started it (its parent actor, or the parent its operation's record names); `next`
 * where the next page starts. 404 for an unknown agent. Three reads at most: the runtime's page,
 * the operations' records, and the parents only the records name.
 *
 * @example
 * const { operations, next } = await listAgentOperations(deps, { agentId, limit: 20 })
 */
export async function listAgentOperations({ runtime, store }: ListAgentOperationsDeps, { agentId, limit, before }: ListAgentOperationsInput) {
  if (!(await runtime.inspect.owner(agentId, 'agent'))) throw new NotFoundError('Agent')
  const rows = await runtime.inspect.actorsNamingPage({ key: 'agentId', id: agentId, kinds: ['walletop', 'launch'], limit, before })
  const page = rows.slice(0, limit)
  const facts = page.length ? await store.walletOpFacts(page.map((r) => r.id)) : new Map<string, { usdValue: string | null; parentId: string | null }>()
  const unread = [...new Set(page.flatMap((r) => (r.parentId === null && facts.get(r.id)?.parentId ? [facts.get(r.id)!.parentId!] : [])))]
  const parents = new Map((unread.length ? await runtime.inspect.listActors({ match: { ids: unread }, limit: unread.length }) : []).map((p) => [p.id, p]))
  const parentOf = (r: (typeof page)[number]) => {
    if (r.parentId !== null) return r.parent
    const p = parents.get(facts.get(r.id)?.parentId ?? '')
    return p ? { id: p.id, kind: p.kind, status: p.status } : null
  }
  const operations = page.map((r) => operationView({ ...r, usdValue: facts.get(r.id)?.usdValue ?? null, parent: parentOf(r) }))
  const last = page.at(-1)
  return { operations, next: rows.length > limit && last ? { createdAt: last.createdText, id: last.id } : null }
}
