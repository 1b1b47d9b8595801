import { ServiceError } from '../errors.ts'

/** 422 `nothing_to_claim`: no token of the agent (or not the one named) has unclaimed creator fees. */
export class NothingToClaimError extends ServiceError {
  constructor(message = 'There are no creator fees to claim.') {
    super(message, { code: 'nothing_to_claim', status: 422 })
  }
}
