import type { CreditKind } from './creditKinds.ts'
import type { CreditEntry, CreditsRepository } from './ports.ts'

export type ListCreditTransactionsInput = {
  accountId: string
  limit: number
  kind?: CreditKind | undefined
  after?: { createdAt: string; id: string } | undefined
}

/** A ledger entry as the API shows it. */
export function creditTransactionView(e: CreditEntry) {
  return { id: e.id, kind: e.kind, credits: e.credits, balanceAfter: e.balanceAfter, ref: e.ref, createdAt: e.createdAt }
}

/**
 * The account's ledger, newest first, optionally of one kind; `last` is where the next page starts.
 *
 * @example
 * const { transactions, last } = await listCreditTransactions(deps, { accountId, limit: 20, kind: 'grant' })
 */
export async function listCreditTransactions(deps: { credits: CreditsRepository }, input: ListCreditTransactionsInput) {
  const { entries, more } = await deps.credits.list(input.accountId, { limit: input.limit, kind: input.kind, after: input.after })
  const last = more ? entries.at(-1) : undefined
  return { transactions: entries.map(creditTransactionView), last: last ? { createdAt: last.cursorAt, id: last.id } : undefined }
}
