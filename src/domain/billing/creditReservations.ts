import { ValidationError } from '../errors.ts'
import type { CreditKind } from './creditKinds.ts'
import type { CreditEntry, CreditReservation, CreditsRepository, Queryable } from './ports.ts'

export type CreditReservationDeps = { credits: CreditsRepository }

const nonNegativeInt = (n: number, field: string, min = 0) => {
  if (!Number.isSafeInteger(n) || n < min) throw new ValidationError({ [field]: `Must be an integer of at least ${min}.` })
}

/**
 * Holds the worst-case cost of a call before it is made, so that balance - reserved never goes
 * below zero however many calls run at once. Idempotent per (account, ref).
 * Throws InsufficientCreditsError (402) when too little is left.
 *
 * @example
 * const reservation = await reserveCredits(deps, { accountId, credits: worstCaseCredits(call, model), ref: effectId })
 */
export async function reserveCredits(deps: CreditReservationDeps, input: { accountId: string; credits: number; ref: string }, tx?: Queryable): Promise<CreditReservation> {
  nonNegativeInt(input.credits, 'credits', 1)
  return deps.credits.reserve(input, tx)
}

/**
 * Ends a reservation with the actual charge (a `model_usage` entry unless told otherwise), in
 * the caller's transaction when `tx` is given, so the charge commits with the event that records
 * the call's result. Written once per ref: settling again charges nothing more.
 *
 * @example
 * await withTransaction(pool, async (tx) => {
 *   await recordResult(tx, result)
 *   await settleReservation(deps, reservation, { credits: modelCallCredits(result.usage, model), ref: effectId }, tx)
 * })
 */
export async function settleReservation(
  deps: CreditReservationDeps,
  reservation: CreditReservation,
  charge: { credits: number; ref: string; kind?: CreditKind },
  tx?: Queryable,
): Promise<{ entry: CreditEntry; created: boolean }> {
  nonNegativeInt(charge.credits, 'credits')
  return deps.credits.settle(reservation, { credits: charge.credits, ref: charge.ref, kind: charge.kind ?? 'model_usage' }, tx)
}

/**
 * Gives a reservation back without a charge (the call was never made or failed with no usage).
 *
 * @example
 * await releaseReservation(deps, reservation)
 */
export function releaseReservation(deps: CreditReservationDeps, reservation: CreditReservation, tx?: Queryable): Promise<boolean> {
  return deps.credits.release(reservation, tx)
}
