import type { Middleware } from 'koa'
import type { Logger } from '../../logger.ts'
import { ServiceError } from '../../domain/errors.ts'
import { BadRequestError, InvalidJsonError, MethodNotAllowedError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../inputErrors.ts'

type HttpishError = Error & { status?: number; statusCode?: number; expose?: boolean; type?: string; headers?: Record<string, string> }

/** Maps errors raised by koa and its libraries (body parser, router) to our codes. */
function fromHttpError(err: HttpishError): ServiceError | undefined {
  const status = err.status ?? err.statusCode
  if (!status || status >= 500) return undefined
  if (status === 413 || err.type === 'entity.too.large') {
    return new PayloadTooLargeError({ limitBytes: 1024 * 1024, closeConnection: false })
  }
  if (status === 400 && (err.type === 'entity.parse.failed' || err instanceof SyntaxError)) {
    return new InvalidJsonError()
  }
  if (status === 405) {
    const allow = err.headers?.Allow ?? err.headers?.allow
    return new MethodNotAllowedError({ allow })
  }
  if (status === 501) return new MethodNotAllowedError({ notImplemented: true })
  if (status === 415) return new UnsupportedMediaTypeError()
  if (status === 400) return new BadRequestError()
  return undefined
}

/**
 * Turns every error into `{ error, code, field_errors? }`; `serviceErrorOf` (the core's) names
 * what a library's error means, so a node that cannot be reached is a 503 `chain_unavailable`
 * with `Retry-After`, whichever route met it. Unexpected errors are logged with the request id
 * and answered with a generic 500 that says nothing about internals.
 */
export function errorEnvelope({ logger, serviceErrorOf }: { logger: Logger; serviceErrorOf: (err: unknown) => ServiceError | undefined }): Middleware {
  return async (ctx, next) => {
    try {
      await next()
    } catch (raw) {
      const err = raw instanceof ServiceError ? raw : (fromHttpError(raw as HttpishError) ?? serviceErrorOf(raw))
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
