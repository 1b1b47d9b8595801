import type pg from 'pg'
import { privateKeyToAccount } from 'viem/accounts'
import type { LocalAccount } from 'viem'
import { decryptPrivateKey } from './keystore.ts'
import { NotFoundError } from '../../domain/errors.ts'
import { walletKeyEncrypted } from '../db/agentWalletKey.store.ts'

/**
 * The signing account of an agent's custodial wallet: the key is decrypted in memory only for
 * as long as the caller holds the account, and never logged or returned.
 */
export async function loadAgentAccount(pool: pg.Pool, masterKey: Buffer, agentId: string): Promise<LocalAccount> {
  const encrypted = await walletKeyEncrypted(pool, agentId)
  if (encrypted === undefined) throw new NotFoundError('Agent')
  return privateKeyToAccount(decryptPrivateKey({ masterKey, agentId, encrypted }))
}
