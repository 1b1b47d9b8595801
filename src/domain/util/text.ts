import { z } from 'zod'

/**
 * Length in Unicode code points: what the API docs call characters, what PostgreSQL's
 * `char_length` and JSON Schema's `maxLength` count. An emoji such as 😀 is one (two UTF-16
 * units); a flag or a family emoji is several.
 *
 * @example
 * codePointLength('😀😀') // 2 ('😀😀'.length is 4)
 */
export function codePointLength(s: string): number {
  let n = 0
  for (const _ of s) n++
  return n
}

/**
 * A string of `min`..`max` characters counted in code points (see codePointLength), trimmed
 * first when `trim` is set; the OpenAPI document shows the same bounds.
 *
 * @example
 * const name = text({ min: 1, max: 64, trim: true })
 */
export function text({ min = 0, max, trim = false }: { min?: number; max: number; trim?: boolean }) {
  const base = trim ? z.string().trim() : z.string()
  return base
    .refine((s) => codePointLength(s) >= min, min === 1 ? 'Required; must not be empty.' : `At least ${min} characters.`)
    .refine((s) => codePointLength(s) <= max, `At most ${max} characters.`)
    .meta({ ...(min > 0 ? { minLength: min } : {}), maxLength: max })
}
