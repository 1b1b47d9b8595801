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
