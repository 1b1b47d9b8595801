import type pg from 'pg'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import type { ChainHandle } from './chain.ts'
import { encryptPrivateKey } from './keystore.ts'
import { lookupToken } from './tokenInfo.ts'
import { findTokens } from '../db/tokens.store.ts'
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
 * The symbol of the token whose contract is at `address`, when the service knows one there (WETH,
 * the quote assets, the stocks of the manifest, the launched tokens it indexed); else undefined.
 *
 * @example
 * await tokenContractAt(pool, chain)('0x…usdc') // 'USDC'
 */
export function tokenContractAt(pool: pg.Pool, chain: ChainHandle): (address: string) => Promise<string | undefined> {
  return async (address) => {
    const a = address.toLowerCase()
    const m = chain.manifest
    if (m.contracts.weth.toLowerCase() === a) return 'WETH'
    for (const [symbol, q] of Object.entries(m.quoteAssets)) if (q.address.toLowerCase() === a) return q.native ? 'WETH' : symbol
    for (const s of m.stocks) if (s.address.toLowerCase() === a) return s.symbol
    const [row] = await findTokens(pool, chain.chainId, { address: a })
    return row?.symbol
  }
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
