import { getAddress, type Hex, type TransactionReceipt } from 'viem'
import { recordReceipt } from '../txSender/outbox.ts'
import { isAlreadyKnown } from '../txSender/txErrors.ts'
import type { IndexerContext } from './indexerContext.ts'
import type { Rebroadcast } from './reorg.ts'

/** Outbox rows a reorg put back that still cannot be sent this long after are marked failed. */
const GIVE_UP_SECONDS = 600

type PutBack = Rebroadcast & { stale: boolean }

/**
 * Outbox rows put back by a reorg: confirmed again when mined, else sent again. Returns how
 * many are still waiting.
 */
export async function reconfirmOutbox(ctx: IndexerContext): Promise<number> {
  const { pool, client, chainId, log } = ctx
  const { rows } = await pool.query<PutBack>(
    `select id, raw, hash, from_address, nonce, reorged_at < now() - make_interval(secs => $2) as stale from chain_tx
      where chain_id = $1 and status = 'broadcast' and reorged_at is not null order by from_address, nonce`,
    [chainId, GIVE_UP_SECONDS],
  )
  const pending: PutBack[] = []
  for (const row of rows) {
    const receipt = await receiptOf(ctx, row.hash)
    if (!receipt) {
      pending.push(row)
      continue
    }
    await recordReceipt(pool, row.id, receipt, { onlyIfBroadcast: true })
    log.info({ id: row.id, hash: row.hash, block: Number(receipt.blockNumber) }, 're-broadcast transaction confirmed again')
  }
  for (const row of pending) {
    try {
      await client.sendRawTransaction({ serializedTransaction: row.raw })
    } catch (err) {
      if (!isAlreadyKnown(err)) {
        log.warn({ err: String(err), id: row.id }, 're-broadcast failed')
        // E.g. a chain that came back without the funds: stop re-sending, say why.
        if (row.stale) await markFailed(ctx, row.id, `re-broadcast after a reorg kept failing: ${String(err).slice(0, 300)}`)
        continue
      }
      await settleLostNonce(ctx, row)
    }
  }
  return pending.length
}

const receiptOf = ({ client }: IndexerContext, hash: string): Promise<TransactionReceipt | undefined> =>
  client.getTransactionReceipt({ hash: hash as Hex }).catch(() => undefined)

async function markFailed({ pool }: IndexerContext, id: string, error: string) {
  await pool.query(`update chain_tx set status = 'failed', error = $2, updated_at = now() where id = $1 and status = 'broadcast'`, [id, error])
}

/**
 * A re-sent row the node calls known: when its nonce is used up on chain and it has no receipt,
 * another transaction took the nonce. One of our own replacements (same nonce, higher fee)
 * makes it `replaced`; anything else makes it `failed`.
 */
async function settleLostNonce(ctx: IndexerContext, row: PutBack) {
  const { pool, client, chainId, log } = ctx
  const mined = await client.getTransactionCount({ address: getAddress(row.from_address), blockTag: 'latest' })
  if (mined <= Number(row.nonce) || (await receiptOf(ctx, row.hash))) return
  const { rows: siblings } = await pool.query<{ id: string; hash: string }>(
    `select id, hash from chain_tx where chain_id = $1 and from_address = $2 and nonce = $3 and id <> $4`,
    [chainId, row.from_address, row.nonce, row.id],
  )
  let winner: string | undefined
  for (const s of siblings) {
    if (await receiptOf(ctx, s.hash)) winner = s.id
  }
  if (winner) {
    await pool.query(`update chain_tx set status = 'replaced', replaced_by = $2, updated_at = now() where id = $1 and status = 'broadcast'`, [
      row.id, winner,
    ])
    return
  }
  await markFailed(ctx, row.id, 'after a reorg, another transaction was mined with this nonce')
  log.error({ id: row.id, nonce: row.nonce }, 'a re-broadcast transaction lost its nonce to another transaction')
}
