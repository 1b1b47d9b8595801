/*
 * The runtime's refusals. A caller that speaks another error vocabulary (an HTTP API's 404 and
 * 409) hands in `RuntimeErrors` when it creates the runtime, so what it throws is the caller's own.
 */

/** How the runtime tells its caller that an actor is not there, or that its state refuses an event. */
export type RuntimeErrors = {
  /** No actor has this id. */
  notFound(actorId: string): Error
  /** The actor's current state (`state`, its status) does not take `event`; `within`: sent inside the caller's transaction (which should roll back). */
  refused(info: { actorId: string; event: string; state: string; within: boolean }): Error
}

/** No actor has the id asked for. */
export class ActorNotFoundError extends Error {
  readonly code = 'not_found'
  readonly actorId: string
  constructor(actorId: string) {
    super(`Actor ${actorId} not found.`)
    this.actorId = actorId
  }
}

/** An event the actor's current state does not take. */
export class ActorEventRefusedError extends Error {
  readonly code = 'invalid_state'
  constructor({ actorId, event, state }: { actorId: string; event: string; state: string }) {
    super(`Actor ${actorId} in state ${state} does not take ${event}.`)
  }
}

/** The runtime's own errors, when the caller hands in none. */
export const defaultRuntimeErrors: RuntimeErrors = {
  notFound: (actorId) => new ActorNotFoundError(actorId),
  refused: (info) => new ActorEventRefusedError(info),
}

/**
 * An actor whose stored snapshot this build cannot read: written by another machine version
 * with no migration declared, or malformed. The actor is marked stuck for an operator.
 */
export class ActorUnloadableError extends Error {
  readonly code = 'actor_unloadable'
  readonly actorId: string
  constructor(actorId: string, reason: string) {
    super(`Actor ${actorId} cannot be loaded: ${reason}`)
    this.actorId = actorId
  }
}
