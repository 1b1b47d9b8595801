import type { CreditsRepository } from '../domain/billing/ports.ts'
import { getBilling } from '../domain/billing/getBilling.ts'
import { listCreditTransactions, type ListCreditTransactionsInput } from '../domain/billing/listCreditTransactions.ts'
import { getDepositInfo, type GetDepositInfoDeps } from '../domain/billing/getDepositInfo.ts'
import { NotFoundError } from '../domain/errors.ts'

/**
 * Credits (src/domain/billing), wired for src/app/core.ts: the balance, the ledger, and where an
 * account buys credits on chain (its deposit address; 404 without a chain).
 *
 * @example
 * const billing = billingUseCases({ credits, deposits })
 * await billing.getDepositInfo({ accountId })
 */
export function billingUseCases({ credits, deposits }: { credits: CreditsRepository; deposits?: GetDepositInfoDeps | undefined }) {
  return {
    getBilling: (input: { accountId: string }) => getBilling({ credits }, input),
    listCreditTransactions: (input: ListCreditTransactionsInput) => listCreditTransactions({ credits }, input),
    getDepositInfo: async (input: { accountId: string }) => {
      if (!deposits) throw new NotFoundError('Route')
      return getDepositInfo(deposits, input)
    },
  }
}
