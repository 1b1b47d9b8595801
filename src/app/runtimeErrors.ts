import { ActorUnloadableError, type RuntimeErrors } from '../actors/runtime/index.ts'
import { InvalidStateError, NotFoundError, ServiceError } from '../domain/errors.ts'

/** The runtime's refusals in the API's words: a missing actor is 404 `not_found`, an event its state refuses 409 `invalid_state`. */
export const apiRuntimeErrors: RuntimeErrors = {
  notFound: () => new NotFoundError('Actor'),
  refused: ({ actorId, event, state, within }) =>
    within ? new ServiceError(`Actor ${actorId} in state ${state} does not take ${event}.`, { code: 'invalid_state', status: 409 }) : new InvalidStateError({ event, state }),
}

/** An actor this build cannot load, as a client hears it: 500 `actor_unloadable` (an operator unsticks it). */
export function runtimeServiceErrorOf(err: unknown): ServiceError | undefined {
  return err instanceof ActorUnloadableError ? new ServiceError(err.message, { code: 'actor_unloadable', status: 500, cause: err }) : undefined
}
