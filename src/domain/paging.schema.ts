import { z } from 'zod'
import { ValidationError } from './errors.ts'

/**
 * `?limit=`: a plain decimal integer from 1 to 100 (`0x10`, `1e2`, ` 5` and `5.0` are refused,
 * though JavaScript's Number() would take them), 20 when absent.
 */
export const limitQuery = z
  .string()
  .regex(/^[0-9]{1,3}$/, 'An integer from 1 to 100.')
  .transform(Number)
  .pipe(z.number().int().min(1, 'An integer from 1 to 100.').max(100, 'An integer from 1 to 100.'))
  .default(20)

/** An opaque cursor over a tuple of sort keys (base64url JSON). */
export const encodeTupleCursor = (v: unknown[]): string => Buffer.from(JSON.stringify(v)).toString('base64url')

/**
 * The sort keys of a cursor made by encodeTupleCursor; 422 on `cursor` when it is not one.
 *
 * @example
 * const [block, address] = decodeTupleCursor(cursor, z.tuple([z.number().int(), z.string().max(42)]))
 */
export function decodeTupleCursor<T>(cursor: string, schema: z.ZodType<T>): T {
  try {
    return schema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString()))
  } catch {
    throw new ValidationError({ cursor: 'Invalid cursor.' })
  }
}
