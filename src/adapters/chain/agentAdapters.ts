import type pg from 'pg'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import type { ChainHandle } from './chain.ts'
import { encryptPrivateKey } from './keystore.ts'
import { lookupToken } from './tokenInfo.ts'
import type { AgentWallet } from '../../domain/agents/ports.ts'
import type { ResolveVerifiedSymbol } from '../../domain/agents/resolvePolicyTokens.ts'

/**
 * A fresh custodial wallet for a new agent, its key encrypted bound to the agent id.
 *
 * @example
 * const { address, encryptedKey } = newAgentWallet(masterKey, agentId)
 */
export function newAgentWallet(masterKey: Buffer, agentId: string): AgentWallet {
  const privateKey = generatePrivateKey()
  return { address: privateKeyToAccount(privateKey).address.toLowerCase(), encryptedKey: encryptPrivateKey({ masterKey, agentId, privateKey }) }
}

/**
 * Resolves a policy token-list symbol to a verified token only (a look-alike launch is named by its address).
 *
 * @example
 * const resolve = verifiedSymbolResolver(pool, chain)
 * const r = await resolve('USDC') // { address } or { error }
 */
export function verifiedSymbolResolver(pool: pg.Pool, chain: ChainHandle): ResolveVerifiedSymbol {
  return async (symbol) => {
    const r = await lookupToken({ pool, chain }, symbol, { verifiedSymbolsOnly: true })
    return 'token' in r ? { address: r.token.address } : r
  }
}
