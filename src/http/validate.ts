import type { Middleware } from 'koa'
import { z } from 'zod'
import { ValidationError, type FieldErrors } from '../domain/errors.ts'
import { fieldErrorsOf, emptyFieldErrors } from '../domain/fieldErrors.ts'
import { limitQuery } from '../domain/paging.schema.ts'

export { emptyFieldErrors, fieldErrorsOf } from '../domain/fieldErrors.ts'

/**
 * Parses one part of a request; throws a 422 naming every bad field.
 *
 * @example
 * const body = parse(createAgentBody, ctx.request.body)
 * const { id } = parse(idParams, ctx.params)
 */
export function parse<T extends z.ZodType>(schema: T, value: unknown, prefix?: string): z.output<T> {
  const result = schema.safeParse(value)
  if (!result.success) throw new ValidationError(fieldErrorsOf(result.error, prefix))
  return result.data
}

/**
 * Fields whose string value (or key) holds a NUL character, which PostgreSQL refuses in text and
 * jsonb: a request carrying one is a 422 naming each such field, instead of a failed write.
 *
 * @example
 * nulFieldErrors({ name: 'a\u0000b' }) // { name: 'Must not contain NUL (\\u0000) characters.' }
 */
export function nulFieldErrors(value: unknown): FieldErrors | undefined {
  const out = emptyFieldErrors()
  const walk = (v: unknown, path: string, depth: number) => {
    if (Object.keys(out).length >= 20 || depth > 32) return
    if (typeof v === 'string') {
      if (v.includes('\u0000')) out[path || 'body'] = 'Must not contain NUL (\\u0000) characters.'
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, path ? `${path}.${i}` : String(i), depth + 1))
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        const at = path ? `${path}.${k}` : k
        if (k.includes('\u0000')) out[at] = 'Must not contain NUL (\\u0000) characters.'
        else walk(item, at, depth + 1)
      }
    }
  }
  walk(value, '', 0)
  return Object.keys(out).length > 0 ? out : undefined
}

/** A uuid path parameter (anything else is a 404: it cannot name a resource). */
export const uuidParam = z.uuid()

export { limitQuery } from '../domain/paging.schema.ts'

export const pagingQuery = z.strictObject({
  limit: limitQuery,
  cursor: z.string().max(200).optional(),
})

export { decodeCursor, encodeCursor, isPostgresTimestamp } from '../domain/util/pageCursor.ts'

/** EVM address, normalised to lower case for storage and comparison. */
export const evmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'Must be a 0x-prefixed 20-byte hex address.')
  .transform((a) => a.toLowerCase() as `0x${string}`)

const noQuery = z.strictObject({})

/**
 * The body of a command that takes none: absent or `{}`; any field is a 422 naming it, as on
 * every other command.
 *
 * @example
 * parse(noBody, ctx.request.body)
 */
export const noBody = z.union([z.undefined(), z.strictObject({})])

/**
 * Route middleware for a route that takes no query parameters: any one is a 422 naming it, so
 * a misspelt or misplaced parameter is never silently ignored.
 *
 * @example
 * router.get('/me', requireScope('read'), rejectQuery, handler)
 */
export const rejectQuery: Middleware = async (ctx, next) => {
  if (ctx.querystring !== '') parse(noQuery, ctx.query)
  await next()
}
