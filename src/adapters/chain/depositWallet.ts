import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { encryptPrivateKey } from './keystore.ts'

/**
 * A fresh key for an account's deposit address, encrypted with the wallet keystore like an
 * agent's. The associated data is `deposit:<accountId>`, so the ciphertext decrypts for that
 * account's deposit address only (never as an agent wallet, whose data is the agent id).
 *
 * @example
 * const { address, encryptedKey } = newDepositKey(masterKey, accountId)
 */
export function newDepositKey(masterKey: Buffer, accountId: string): { address: string; encryptedKey: string } {
  const privateKey = generatePrivateKey()
  return {
    address: privateKeyToAccount(privateKey).address.toLowerCase(),
    encryptedKey: encryptPrivateKey({ masterKey, agentId: `deposit:${accountId}`, privateKey }),
  }
}
