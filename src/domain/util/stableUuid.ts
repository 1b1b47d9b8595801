import { createHash } from 'node:crypto'

/**
 * A UUID (version 5 layout) derived from the parts: the same parts always give the same id. A
 * retried request or tool call finds the resource its first attempt created under this id.
 *
 * @example
 * stableUuid(accountId, 'swap/execute', idempotencyKey)
 */
export function stableUuid(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 32).split('')
  h[12] = '5'
  h[16] = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)
  const s = h.join('')
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20, 32)}`
}
