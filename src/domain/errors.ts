/**
 * Every error the service throws on purpose extends ServiceError: it carries the API `code`
 * and HTTP status, so one middleware can turn it into the `{ error, code, field_errors }`
 * envelope. Errors from libraries are wrapped where they enter our code, keeping `cause`.
 */
export type FieldErrors = Record<string, string>

export class ServiceError extends Error {
  override name = 'ServiceError'
  readonly code: string
  readonly status: number
  readonly fieldErrors: FieldErrors | undefined
  /** Extra response headers (e.g. Retry-After). */
  readonly headers: Record<string, string> | undefined

  constructor(
    message: string,
    opts: { code: string; status: number; fieldErrors?: FieldErrors; headers?: Record<string, string>; cause?: unknown },
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause })
    this.code = opts.code
    this.status = opts.status
    this.fieldErrors = opts.fieldErrors
    this.headers = opts.headers
  }

  /** Walks the `cause` chain, as viem's BaseError.walk does. */
  walk(predicate?: (err: unknown) => boolean): unknown {
    let err: unknown = this
    while (err instanceof Error) {
      if (predicate?.(err)) return err
      if (err.cause === undefined) break
      err = err.cause
    }
    return predicate ? undefined : err
  }
}

export class ValidationError extends ServiceError {
  constructor(fieldErrors: FieldErrors, message = 'Request validation failed.') {
    super(message, { code: 'validation_failed', status: 422, fieldErrors })
  }
}

export class NotFoundError extends ServiceError {
  constructor(what = 'Resource') {
    super(`${what} not found.`, { code: 'not_found', status: 404 })
  }
}

export class UnauthorizedError extends ServiceError {
  constructor(message = 'Missing, invalid or revoked credentials.') {
    super(message, { code: 'unauthorized', status: 401 })
  }
}

export class ForbiddenError extends ServiceError {
  constructor(message = 'This credential may not perform this action.', code = 'forbidden') {
    super(message, { code, status: 403 })
  }
}

export class InvalidStateError extends ServiceError {
  constructor({ event, state }: { event: string; state: string }) {
    super(`Cannot ${event} while ${state}.`, { code: 'invalid_state', status: 409 })
  }
}

export class RateLimitedError extends ServiceError {
  constructor({ retryAfterSeconds }: { retryAfterSeconds: number }) {
    super('Too many requests; retry later.', {
      code: 'rate_limited',
      status: 429,
      headers: { 'Retry-After': String(retryAfterSeconds) },
    })
  }
}

/**
 * 422 `insufficient_funds`: the wallet lacks what an operation moves or pays in gas. The one
 * class for it: by default in wei (value plus gas), or with a message naming the token.
 */
export class InsufficientFundsError extends ServiceError {
  constructor(p: { needed: bigint; balance: bigint } | { message: string }) {
    super('message' in p ? p.message : `The agent wallet holds ${p.balance} wei but this needs about ${p.needed} wei (value plus gas).`, {
      code: 'insufficient_funds',
      status: 422,
    })
  }
}

/** 422 `simulation_reverted`: a transaction would revert; `message` re-raises a recorded refusal as it was worded. */
export class SimulationRevertedError extends ServiceError {
  constructor(reason: string | { message: string }, cause?: unknown) {
    super(typeof reason === 'string' ? `The transaction would revert: ${reason}` : reason.message, { code: 'simulation_reverted', status: 422, cause })
  }
}

/** The same Idempotency-Key sent with another body: 422 `idempotency_key_reused`. */
export class IdempotencyKeyReusedError extends ServiceError {
  constructor() {
    super('This Idempotency-Key was used with a different request body.', { code: 'idempotency_key_reused', status: 422 })
  }
}

/** The request needs an Idempotency-Key and sent none: 400 `idempotency_key_required`. */
export class IdempotencyKeyRequiredError extends ServiceError {
  constructor() {
    super('Send an Idempotency-Key header (any unique string, e.g. a uuid) with this request.', { code: 'idempotency_key_required', status: 400 })
  }
}

/**
 * 409 `idempotency_key_in_progress`: a request with this key is still in flight (retry after its
 * claim lapses), or its row vanished between two reads.
 */
export class IdempotencyKeyInProgressError extends ServiceError {
  constructor({ retryAfterSeconds }: { retryAfterSeconds?: number } = {}) {
    super(
      retryAfterSeconds === undefined ? 'Idempotency key vanished; retry.' : 'A request with this Idempotency-Key is still in flight; retry shortly.',
      { code: 'idempotency_key_in_progress', status: 409, ...(retryAfterSeconds === undefined ? {} : { headers: { 'Retry-After': String(retryAfterSeconds) } }) },
    )
  }
}

/** 409 `<kind>_in_progress`: another wallet operation of this kind of the agent has not ended. */
export class OperationInProgressError extends ServiceError {
  constructor({ kind }: { kind: string }) {
    super(`A ${kind === 'claim' ? 'fee claim' : kind} of this agent is still in flight; retry when it has ended.`, {
      code: `${kind}_in_progress`,
      status: 409,
      headers: { 'Retry-After': '2' },
    })
  }
}

/**
 * A wallet operation's recorded failure, re-raised with its own code: 502 when the chain did not
 * take or confirm it, else 422.
 */
export class OperationFailedError extends ServiceError {
  constructor({ code, message }: { code: string; message: string }) {
    super(message, { code, status: code === 'submit_failed' || code === 'confirmation_failed' ? 502 : 422 })
  }
}

/** 409 `invalid_state`: the agent is deleted. */
export class AgentDeletedError extends ServiceError {
  constructor() {
    super('The agent is deleted.', { code: 'invalid_state', status: 409 })
  }
}

export class ServiceUnavailableError extends ServiceError {
  constructor(message: string, { code = 'service_unavailable', retryAfterSeconds }: { code?: string; retryAfterSeconds?: number } = {}) {
    super(message, {
      code,
      status: 503,
      ...(retryAfterSeconds === undefined ? {} : { headers: { 'Retry-After': String(retryAfterSeconds) } }),
    })
  }
}

/** 503 `chain_unavailable` with `Retry-After`: the node could not be reached or did not answer in time (`cause`: what the chain client threw). */
export class ChainUnavailableError extends ServiceUnavailableError {
  constructor(cause?: unknown) {
    super('The chain could not be read; retry shortly.', { code: 'chain_unavailable', retryAfterSeconds: 2 })
    if (cause !== undefined) this.cause = cause
  }
}

/**
 * 503 `database_unavailable` with `Retry-After`: no database host accepting writes answered
 * (down, or a standby being promoted); nothing was committed, and an `Idempotency-Key` is released
 * for a retry (`cause`: what the driver threw).
 */
export class DatabaseUnavailableError extends ServiceUnavailableError {
  constructor(cause?: unknown) {
    super('The database is not reachable; retry shortly.', { code: 'database_unavailable', retryAfterSeconds: 2 })
    if (cause !== undefined) this.cause = cause
  }
}

/** 503 `chain_unavailable`: this service runs without a chain. */
export class ChainNotConfiguredError extends ServiceUnavailableError {
  constructor() {
    super('The chain is not configured.', { code: 'chain_unavailable' })
  }
}

/** Too few credits left (balance minus reservations) for what the call may cost: 402. */
export class InsufficientCreditsError extends ServiceError {
  readonly available: number
  readonly required: number
  constructor({ available, required }: { available: number; required: number }) {
    super(`Insufficient credits: ${required} needed, ${available} available.`, { code: 'insufficient_credits', status: 402 })
    this.available = available
    this.required = required
  }
}

/**
 * The model provider failed: 502 with its HTTP status (null when it never answered) and a short
 * reason of ours, never the provider's raw body. The SDK's error is kept as `cause` for the logs.
 */
export class ModelProviderError extends ServiceError {
  readonly providerStatus: number | null
  constructor({ providerStatus, reason, cause }: { providerStatus: number | null; reason: string; cause?: unknown }) {
    const status = providerStatus === null ? 'no answer' : `status ${providerStatus}`
    super(`Model provider error (${status}): ${reason}`, { code: 'model_provider_error', status: 502, cause })
    this.providerStatus = providerStatus
  }
}

/** No model provider is configured: 503 naming the variables to set. */
export class ModelProviderNotConfiguredError extends ServiceError {
  constructor() {
    super(
      'No model provider is configured: set OPENAI_BASE_URL (any OpenAI-compatible server) and/or OPENAI_API_KEY, then restart.',
      { code: 'model_provider_not_configured', status: 503 },
    )
  }
}

/** A model asked for a tool its agent's skills (or the chat scopes) do not grant: told so as the tool's result. */
export class ToolNotGrantedError extends ServiceError {
  constructor(name: string) {
    super(`The tool ${name} is not available to this agent (its skills do not grant it).`, { code: 'tool_not_granted', status: 403 })
  }
}

/** A chat turn ended in failure: its error as the turn recorded it (e.g. 502 model_provider_error, 402 insufficient_credits). */
export class ChatTurnFailedError extends ServiceError {
  constructor({ code, message, status }: { code: string; message: string; status: number }) {
    super(message, { code, status })
  }
}

/** The agent has a run that has not ended (one run at a time per agent). */
export class RunInProgressError extends ServiceError {
  constructor() {
    super('The agent already has a run in progress; stop it or wait for it to end.', { code: 'run_in_progress', status: 409 })
  }
}

/**
 * 409 `invalid_state`: the agent is listed on the market, so nothing may move its funds (the
 * buyer gets what the listing shows); the seller cancels the listing first.
 */
export class AgentListedError extends ServiceError {
  readonly listingId: string
  constructor({ listingId, action }: { listingId: string; action: string }) {
    super(`Cannot ${action}: the agent is listed on the market (listing ${listingId}); cancel the listing first.`, { code: 'invalid_state', status: 409 })
    this.listingId = listingId
  }
}
