import type { z } from 'zod'
import type { FieldErrors } from './errors.ts'

/**
 * A map of field errors without a prototype, so that a field named `constructor`, `toString`
 * or `__proto__` is a key like any other (on `{}`, `out.constructor ??= ...` would find
 * Object's and write nothing).
 */
export function emptyFieldErrors(): FieldErrors {
  return Object.create(null) as FieldErrors
}

/** Turns zod issues into one message per dotted field path (unknown keys are named one by one). */
export function fieldErrorsOf(error: z.ZodError, prefix?: string): FieldErrors {
  const out = emptyFieldErrors()
  const join = (path: PropertyKey[]) => [prefix, ...path.map(String)].filter((p) => p !== undefined && p !== '').join('.')
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out[join([...issue.path, key])] ??= 'Unknown field.'
      continue
    }
    const field = join(issue.path) || prefix || 'body'
    out[field] ??= issue.message
  }
  return out
}
