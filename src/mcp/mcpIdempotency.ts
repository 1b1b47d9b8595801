import { createHash } from 'node:crypto'
import type { IdempotencyKeys } from '../adapters/db/idempotency.store.ts'
import { canonicalJson } from '../http/middleware/idempotency.ts'
import { McpIdempotencyKeyReusedError } from './mcpErrors.ts'

/** Claims an MCP `idempotencyKey` for one call: refused (422) when the key named another call before. */
export type ToolKeyClaim = (input: { accountId: string; key: string; name: string; args: unknown }) => Promise<void>

/**
 * The key is stored with a fingerprint (sha256 of the tool name and the canonical arguments,
 * `confirm` and the key left out) in the API's idempotency table under the route `mcp`; the first
 * call's fingerprint stays. The same key with the same call goes on to the tool, whose operation id
 * comes from the key, so a retry finds the first result and moves nothing twice.
 *
 * @example
 * await claimToolKey(core.idempotencyKeys)({ accountId, key: 'k-1', name: 'swap_execute', args: { tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1' } })
 */
export function claimToolKey(keys: Pick<IdempotencyKeys, 'claimMcp' | 'mcpFingerprint'>): ToolKeyClaim {
  return async ({ accountId, key, name, args }) => {
    const fingerprint = createHash('sha256').update(canonicalJson({ name, args })).digest('hex')
    // A claim made at the same moment by another call is not in the claim's snapshot: read it again.
    const first = (await keys.claimMcp(accountId, key, fingerprint)) ?? (await keys.mcpFingerprint(accountId, key))
    if (first !== fingerprint) throw new McpIdempotencyKeyReusedError()
  }
}
