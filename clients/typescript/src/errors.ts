/** The error envelope every refusal of the service carries (docs/api.md, Errors). */
export type ErrorBody = { error: string; code: string; field_errors?: Record<string, string> }

/** Every error the client throws: an answer of the service (`status`, `code`) or no answer at all (`ConnectionError`). */
export class AltsError extends Error {
  override name = 'AltsError'
}

/**
 * An answer outside 2xx, in the contract's error envelope: its `code` (`validation_failed`,
 * `policy_violation`, …), `field_errors` (each bad field with its message), the HTTP status and
 * the request's id (`X-Request-Id`, the one to quote to an operator).
 */
export class ApiError extends AltsError {
  override name = 'ApiError'
  readonly status: number
  readonly code: string
  readonly field_errors: Record<string, string>
  readonly requestId: string | null
  /** `Retry-After` of the answer, in milliseconds (429, 503, 409 in progress). */
  readonly retryAfterMs: number | undefined
  readonly body: unknown

  constructor(status: number, body: unknown, headers: Headers) {
    const envelope = isErrorBody(body) ? body : undefined
    const fields = envelope?.field_errors ? ` ${JSON.stringify(envelope.field_errors)}` : ''
    super(envelope ? `${envelope.error} (${status} ${envelope.code})${fields}` : `HTTP ${status}`)
    this.status = status
    this.code = envelope?.code ?? `http_${status}`
    this.field_errors = envelope?.field_errors ?? {}
    this.requestId = headers.get('x-request-id')
    this.retryAfterMs = retryAfterMs(headers)
    this.body = body
  }
}

/** 400: the request could not be read (`invalid_json`, `invalid_header`, `idempotency_key_required`, …). */
export class BadRequestError extends ApiError { override name = 'BadRequestError' }
/** 401 `unauthorized`: no key, or one that is unknown, expired or deleted. */
export class AuthenticationError extends ApiError { override name = 'AuthenticationError' }
/** 402 `insufficient_credits`. */
export class InsufficientCreditsError extends ApiError { override name = 'InsufficientCreditsError' }
/** 403: the key's scope, or the agent's policy (`policy_violation`, `address_not_whitelisted`, …). */
export class PermissionError extends ApiError { override name = 'PermissionError' }
/** 404 `not_found`. */
export class NotFoundError extends ApiError { override name = 'NotFoundError' }
/** 409: the resource's state refuses it (`invalid_state`, `quote_used`, `idempotency_key_in_progress`, …). */
export class ConflictError extends ApiError { override name = 'ConflictError' }
/** 422 `validation_failed`: `field_errors` names every bad field. */
export class ValidationError extends ApiError { override name = 'ValidationError' }
/** 422 other than `validation_failed`: the request is well formed but cannot be done (`insufficient_funds`, `slippage_exceeded`, …). */
export class UnprocessableError extends ApiError { override name = 'UnprocessableError' }
/** 429 `rate_limited`. */
export class RateLimitError extends ApiError { override name = 'RateLimitError' }
/** 5xx: `chain_unavailable`, `model_provider_error`, `internal_error`, … */
export class ServerError extends ApiError { override name = 'ServerError' }

/** No answer: the connection was refused, reset or cut, on every attempt the retry policy allowed. */
export class ConnectionError extends AltsError {
  override name = 'ConnectionError'
  readonly attempts: number
  constructor(message: string, attempts: number, cause: unknown) {
    super(message, { cause })
    this.attempts = attempts
  }
}

const BY_STATUS: Record<number, typeof ApiError> = {
  400: BadRequestError, 401: AuthenticationError, 402: InsufficientCreditsError, 403: PermissionError,
  404: NotFoundError, 409: ConflictError, 429: RateLimitError,
}

/** The typed error of an answer: by status, and for 422 by whether it is `validation_failed`. */
export function apiErrorOf(status: number, body: unknown, headers: Headers): ApiError {
  const Class = status === 422
    ? (isErrorBody(body) && body.code === 'validation_failed' ? ValidationError : UnprocessableError)
    : BY_STATUS[status] ?? (status >= 500 ? ServerError : ApiError)
  return new Class(status, body, headers)
}

export function isErrorBody(body: unknown): body is ErrorBody {
  return typeof body === 'object' && body !== null && typeof (body as ErrorBody).code === 'string' && typeof (body as ErrorBody).error === 'string'
}

/** `Retry-After` in milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(headers: Headers): number | undefined {
  const raw = headers.get('retry-after')?.trim()
  if (!raw) return undefined
  if (/^\d+$/.test(raw)) return Number(raw) * 1000
  const at = Date.parse(raw)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}
