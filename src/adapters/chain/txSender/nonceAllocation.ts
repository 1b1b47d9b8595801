import type pg from 'pg'

/**
 * Takes the wallet's nonce row lock (held until the database transaction ends) and returns the
 * first nonce free for it: the stored counter, or the chain's pending count when that is ahead
 * (the wallet was used outside this service). A request refused before `commitNextNonce`
 * leaves no gap, because the counter moves only with the stored transactions.
 *
 * @example
 * const first = await lockNextNonce(db, { chainId, address: from, chainNonce })
 */
export async function lockNextNonce(
  db: pg.PoolClient,
  { chainId, address, chainNonce }: { chainId: number; address: string; chainNonce: number },
): Promise<number> {
  await db.query(`insert into wallet_nonce (chain_id, address, next_nonce) values ($1, $2, $3) on conflict do nothing`, [
    chainId, address, chainNonce,
  ])
  const { rows } = await db.query<{ next_nonce: string }>(
    `select next_nonce from wallet_nonce where chain_id = $1 and address = $2 for update`,
    [chainId, address],
  )
  return Math.max(Number(rows[0]!.next_nonce), chainNonce)
}

/** Moves the wallet's counter past the nonces just stored (under the lock `lockNextNonce` took). */
export async function commitNextNonce(db: pg.PoolClient, { chainId, address, next }: { chainId: number; address: string; next: number }) {
  await db.query(`update wallet_nonce set next_nonce = $3 where chain_id = $1 and address = $2`, [chainId, address, next])
}
