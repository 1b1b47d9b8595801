import { ValidationError } from '../errors.ts'
import type { WalletPorts } from './ports.ts'

export type ListTransactionsDeps = Pick<WalletPorts, 'agents' | 'outbox'>
export type ListTransactionsInput = { accountId: string; agentId: string; limit: number; cursor?: string | undefined }

/**
 * The wallet's transaction outbox, newest first, paged by an opaque cursor (the last
 * transaction's id).
 *
 * @example
 * const { transactions, nextCursor } = await listTransactions(deps, { accountId, agentId, limit: 20 })
 */
export async function listTransactions(deps: ListTransactionsDeps, input: ListTransactionsInput) {
  let before: string | undefined
  if (input.cursor) {
    before = Buffer.from(input.cursor, 'base64url').toString()
    if (!/^[A-Za-z0-9:_-]{1,200}$/.test(before)) throw new ValidationError({ cursor: 'Invalid cursor.' })
  }
  await deps.agents.assertOwned(input.accountId, input.agentId)
  const rows = await deps.outbox.page(input.agentId, { limit: input.limit + 1, before })
  const page = rows.slice(0, input.limit)
  return { transactions: page, nextCursor: rows.length > input.limit ? Buffer.from(page.at(-1)!.id).toString('base64url') : null }
}
