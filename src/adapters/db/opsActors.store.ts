import type pg from 'pg'
import type { EffectTransaction } from '../../domain/ops/ports.ts'

/** Timestamps arrive as strings through MikroORM's pool type parsers; the API speaks ISO 8601. */
const iso = (v: string | Date) => new Date(v).toISOString()

/**
 * The service's records the operator console reads beside the runtime's (an actor's own rows
 * are `runtime.inspect`'s): what a search term names, the transactions an actor's effects sent.
 */

/** The effects whose outbox transactions carry this hash (a transaction's request and effect ids). */
export async function effectIdsOfTx(pool: pg.Pool, hash: string): Promise<string[]> {
  const { rows } = await pool.query<{ request_id: string; effect_id: string | null }>('select request_id, effect_id from chain_tx where hash = $1', [hash])
  return [...new Set(rows.flatMap((r) => (r.effect_id ? [r.request_id, r.effect_id] : [r.request_id])))]
}

/** The agents whose wallet is this address (lower-case). */
export async function agentIdsOfWallet(pool: pg.Pool, address: string): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>('select id::text from agent where lower(wallet_address) = $1', [address])
  return rows.map((r) => r.id)
}

/** The transactions these effects sent (their request ids), replacements included, the first 100 by nonce. */
export async function transactionsOf(pool: pg.Pool, effectIds: string[]): Promise<EffectTransaction[]> {
  const { rows } = await pool.query(
    `select t.id, t.kind, t.nonce, t.hash, t.status, t.replaced_by, r.hash as replaced_by_hash, t.block_number, t.gas_used::text,
            t.max_fee_per_gas::text, t.max_priority_fee_per_gas::text, t.effective_gas_price::text,
            (t.gas_used * t.effective_gas_price)::text as fee_wei, t.from_address, t.to_address, t.error, t.created_at, t.updated_at
       from chain_tx t left join chain_tx r on r.id = t.replaced_by where t.request_id = any($1::text[])
      order by t.nonce, t.created_at limit 100`,
    [effectIds],
  )
  return rows.map((t) => ({
    id: t.id as string, kind: t.kind as string, nonce: Number(t.nonce), hash: t.hash as string, status: t.status as string,
    replacedBy: t.replaced_by as string | null, replacedByHash: t.replaced_by_hash as string | null,
    blockNumber: t.block_number === null ? null : Number(t.block_number),
    gasUsed: t.gas_used as string | null, effectiveGasPrice: t.effective_gas_price as string | null, feeWei: t.fee_wei as string | null,
    maxFeePerGas: t.max_fee_per_gas as string, maxPriorityFeePerGas: t.max_priority_fee_per_gas as string,
    from: t.from_address as string, to: t.to_address as string | null,
    error: t.error as string | null, createdAt: iso(t.created_at), updatedAt: iso(t.updated_at),
  }))
}

/** The block of the agent's first transaction in the outbox (null before any). */
export async function firstAgentTxBlock(pool: pg.Pool, agentId: string): Promise<bigint | null> {
  const { rows } = await pool.query<{ b: string | null }>('select min(block_number)::text as b from chain_tx where agent_id = $1', [agentId])
  return rows[0]?.b ? BigInt(rows[0].b) : null
}
