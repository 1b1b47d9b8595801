import { randomUUID } from 'node:crypto'
import { ValidationError } from '../errors.ts'
import type { CreditEntry, CreditsRepository, Queryable } from './ports.ts'

export type GrantCreditsDeps = { credits: CreditsRepository }
export type GrantCreditsInput = {
  accountId: string
  credits: number
  /** Makes the grant happen once: a repeat with the same ref grants nothing. Default: a new id. */
  ref?: string | undefined
}

/**
 * Adds credits to an account as a `grant` entry (the admin CLI's `grant-credits`; the starter
 * grant is written with the account itself).
 *
 * @example
 * const { entry } = await grantCredits({ credits }, { accountId, credits: 500 })
 */
export async function grantCredits(deps: GrantCreditsDeps, input: GrantCreditsInput, tx?: Queryable): Promise<{ entry: CreditEntry; created: boolean }> {
  if (!Number.isSafeInteger(input.credits) || input.credits <= 0) throw new ValidationError({ credits: 'Must be a positive integer.' })
  return deps.credits.append({ accountId: input.accountId, kind: 'grant', credits: input.credits, ref: input.ref ?? `grant:${randomUUID()}` }, tx)
}
