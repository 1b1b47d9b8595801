import { AgentListedError, NotFoundError } from '../../domain/errors.ts'

/**
 * The refusals of the `wallet_op` trigger (Migration20261125100000_market.ts) as the API's errors:
 * a money move recorded for a listed agent (SQLSTATE ML409, the message its listing id) is 409
 * `invalid_state` naming the listing; one recorded for an account that no longer owns the agent
 * (ML404: it was sold) is 404. They happen only when the request read the agent before the
 * listing or the sale committed; anything else is rethrown as it was.
 *
 * @example
 * await runWalletOp(deps, input).catch(marketGuardError(input.kind))
 */
export function marketGuardError(action: string) {
  return (err: unknown): never => {
    const code = (err as { code?: unknown } | null)?.code
    if (code === 'ML409') throw new AgentListedError({ listingId: String((err as Error).message), action })
    if (code === 'ML404') throw new NotFoundError('Agent')
    throw err
  }
}
