import type pg from 'pg'

/** The encrypted private key of an agent's custodial wallet (undefined when there is no such agent). */
export async function walletKeyEncrypted(db: Pick<pg.Pool, 'query'>, agentId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ wallet_key_encrypted: string }>('select wallet_key_encrypted from agent where id = $1', [agentId])
  return rows[0]?.wallet_key_encrypted
}
