import type { Middleware } from 'koa'
import type { Logger } from '../../logger.ts'
import { ServiceError } from '../../domain/errors.ts'
import { chainUnavailableOf } from '../../chain/priceReader.ts'

type HttpishError = Error & { status?: number; statusCode?: number; expose?: boolean; type?: string; headers?: Record<string, string> }

/** Maps errors raised by koa and its libraries (body parser, router) to our codes. */
function fromHttpError(err: HttpishError): ServiceError | undefined {
  const status = err.status ?? err.statusCode
  if (!status || status >= 500) return undefined
  if (status === 413 || err.type === 'entity.too.large') {
    return new ServiceError('Request body exceeds 1 MB.', { code: 'payload_too_large', status: 413 })
  }
  if (status === 400 && (err.type === 'entity.parse.failed' || err instanceof SyntaxError)) {
    return new ServiceError('Request body is not valid JSON.', { code: 'invalid_json', status: 400 })
  }
  if (status === 405) {
    const allow = err.headers?.Allow ?? err.headers?.allow
    return new ServiceError('Method not allowed on this path.', { code: 'method_not_allowed', status: 405, ...(allow ? { headers: { Allow: allow } } : {}) })
  }
  if (status === 501) return new ServiceError('Method not implemented.', { code: 'method_not_allowed', status: 405 })
  if (status === 415) return new ServiceError('Send application/json.', { code: 'unsupported_media_type', status: 415 })
  if (status === 400) return new ServiceError('Bad request.', { code: 'bad_request', status: 400 })
  return undefined
}

/**
 * Turns every error into `{ error, code, field_errors? }`; a node that cannot be reached is a
 * 503 `chain_unavailable` with `Retry-After`, whichever route met it. Unexpected errors are logged with
 * the request id and answered with a generic 500 that says nothing about internals.
 */
export function errorEnvelope({ logger }: { logger: Logger }): Middleware {
  return async (ctx, next) => {
    try {
      await next()
    } catch (raw) {
      const err = raw instanceof ServiceError ? raw : (fromHttpError(raw as HttpishError) ?? chainUnavailableOf(raw))
      if (err) {
        ctx.status = err.status
        ctx.body = {
          error: err.message,
          code: err.code,
          ...(err.fieldErrors ? { field_errors: err.fieldErrors } : {}),
        }
        for (const [k, v] of Object.entries(err.headers ?? {})) ctx.set(k, v)
        if (err.status >= 500) logger.warn({ requestId: ctx.state.requestId, code: err.code }, err.message)
        return
      }
      logger.error({ err: raw, requestId: ctx.state.requestId, path: ctx.path, method: ctx.method }, 'unhandled error')
      ctx.status = 500
      ctx.body = { error: 'Internal error; quote the request id when reporting it.', code: 'internal_error' }
    }
  }
}
