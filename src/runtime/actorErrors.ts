import { ServiceError } from '../domain/errors.ts'

/**
 * An actor whose stored snapshot this build cannot read: written by another machine version
 * with no migration declared, or malformed. The actor is marked stuck for an operator.
 */
export class ActorUnloadableError extends ServiceError {
  constructor(actorId: string, reason: string) {
    super(`Actor ${actorId} cannot be loaded: ${reason}`, { code: 'actor_unloadable', status: 500 })
  }
}

/** An event the actor's current state does not take, sent inside a caller's transaction (which should roll back). */
export class ActorEventRefusedError extends ServiceError {
  constructor({ actorId, event, state }: { actorId: string; event: string; state: string }) {
    super(`Actor ${actorId} in state ${state} does not take ${event}.`, { code: 'invalid_state', status: 409 })
  }
}
