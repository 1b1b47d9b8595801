import { ServiceError } from '../errors.ts'

/** 409 `listing_unavailable`: the listing is sold or cancelled (another buyer was first). */
export class ListingUnavailableError extends ServiceError {
  constructor({ status }: { status: string }) {
    super(`The listing is no longer available (${status}).`, { code: 'listing_unavailable', status: 409 })
  }
}

/** 422 `validation_failed`: an account cannot buy (or bid on) its own listing. */
export class OwnListingError extends ServiceError {
  constructor() {
    super('You cannot buy or bid on your own listing.', { code: 'validation_failed', status: 422, fieldErrors: { id: 'This is your own listing.' } })
  }
}

/** 409 `invalid_state`: the agent has a wallet operation or launch in flight; list it once it ended. */
export class AgentBusyError extends ServiceError {
  constructor() {
    super('Cannot list the agent while one of its wallet operations or launches is in flight; retry when it ended.', { code: 'invalid_state', status: 409 })
  }
}

/** 409 `invalid_state`: the bid is no longer active (accepted, rejected, withdrawn or expired). */
export class BidUnavailableError extends ServiceError {
  constructor({ status }: { status: string }) {
    super(`The bid is no longer active (${status}).`, { code: 'invalid_state', status: 409 })
  }
}
