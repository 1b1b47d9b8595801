import { generateSiweNonce } from 'viem/siwe'
import type { SessionsRepository } from './ports.ts'

export type IssueNonceDeps = { sessions: SessionsRepository; chainId: number; nonceTtlSeconds: number }

/**
 * A single-use nonce for a Sign-In with Ethereum message, and the chain id the message must name.
 *
 * @example
 * const { nonce, chainId } = await issueNonce(deps)
 */
export async function issueNonce(deps: IssueNonceDeps): Promise<{ nonce: string; chainId: number }> {
  const nonce = generateSiweNonce()
  await deps.sessions.insertNonce(nonce, deps.nonceTtlSeconds)
  return { nonce, chainId: deps.chainId }
}
