import { BaseError, ContractFunctionRevertedError } from 'viem'
export { InsufficientFundsError, SimulationRevertedError } from '../../../domain/errors.ts'

/** The revert reason of a viem error, if it is one. */
export function revertReason(err: unknown): string | undefined {
  if (err instanceof BaseError) {
    const revert = err.walk((e) => e instanceof ContractFunctionRevertedError)
    if (revert instanceof ContractFunctionRevertedError) return revert.reason ?? revert.shortMessage
    const msg = err.shortMessage || err.message
    if (/revert/i.test(msg)) return msg.replace(/^.*?reverted(?: with reason string)?:?\s*/i, '').trim() || msg
  }
  return undefined
}

/** The node already has this transaction, or its nonce was used: re-sending it changed nothing. */
export const isAlreadyKnown = (err: unknown) =>
  /already known|nonce too low|known transaction|already imported/i.test(err instanceof Error ? err.message : String(err))
