import { z } from 'zod'
import { text } from '../util/text.ts'
import { SKILL_SLUGS } from './builtinSkills.ts'
import { jsonSchemaProblem } from './jsonSchemaCheck.ts'

/** Limits of a custom skill (the API docs state them). */
export const CUSTOM_SKILL_LIMITS = {
  instructionsChars: 8000,
  /** The `parameters` JSON Schema, as UTF-8 JSON. */
  parametersBytes: 16 * 1024,
  tools: 32,
  tags: 10,
} as const

/** A custom skill's slug: lower-case letters, digits and dashes, not a built-in skill's. */
export const skillSlug = z
  .string('A slug: lower-case letters, digits and dashes.')
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$/, 'A slug of 1-48 lower-case letters, digits and dashes (not at either end).')
  .refine((s) => !SKILL_SLUGS.has(s), 'This slug is a built-in skill; choose another.')

/**
 * How an agent's `skills` name a skill: a built-in slug, the account's own custom skill by slug, or
 * a public custom skill as `author/slug` (the author is the publishing account's id).
 */
export const SKILL_REF = /^(?:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/)?([a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?)$/

/** Splits a skill reference; undefined when it is not one. */
export function parseSkillRef(ref: string): { author: string | undefined; slug: string } | undefined {
  const m = SKILL_REF.exec(ref)
  return m ? { author: m[1], slug: m[2]! } : undefined
}

const tag = z.string('A tag.').regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'A tag of 1-32 lower-case letters, digits and dashes.')
const version = z.string('A version such as "1.0.0".').regex(/^\d{1,6}\.\d{1,6}\.\d{1,6}$/, 'A version such as "1.0.0" (major.minor.patch).')

/** A JSON object that is a JSON Schema (draft 2020-12), at most 16 KB. */
const parameters = z
  .record(z.string(), z.unknown(), 'A JSON Schema object.')
  .superRefine((schema, ctx) => {
    const bytes = Buffer.byteLength(JSON.stringify(schema), 'utf8')
    if (bytes > CUSTOM_SKILL_LIMITS.parametersBytes) {
      ctx.addIssue({ code: 'custom', message: `At most ${CUSTOM_SKILL_LIMITS.parametersBytes} bytes of JSON (this is ${bytes}).` })
      return
    }
    const problem = jsonSchemaProblem(schema)
    if (problem) ctx.addIssue({ code: 'custom', message: `Not a valid JSON Schema: ${problem}` })
  })

/**
 * Custom skill request bodies (camelCase). Built from the tool registry's names, so that a tool
 * outside it is a field error (`tools.0`) like any other. Unknown fields are refused.
 *
 * @example
 * const { create } = customSkillSchemas({ toolNames: new Set(['swap_quote']) })
 * create.parse({ slug: 'dca', name: 'DCA', description: 'Buys a little every day.', instructions: '...', tools: ['swap_quote'] })
 */
export function customSkillSchemas({ toolNames }: { toolNames: ReadonlySet<string> }) {
  const tool = z.string('A tool name.').refine((t) => toolNames.has(t), 'Not a tool of the registry; see the tools of GET /api/v1/skills.')
  const fields = {
    slug: skillSlug,
    name: text({ min: 1, max: 64, trim: true }),
    description: text({ max: 500 }),
    instructions: text({ max: CUSTOM_SKILL_LIMITS.instructionsChars }),
    tools: z
      .array(tool)
      .max(CUSTOM_SKILL_LIMITS.tools)
      .refine((l) => new Set(l).size === l.length, 'Tools must not repeat.'),
    parameters: parameters.nullable(),
    tags: z
      .array(tag)
      .max(CUSTOM_SKILL_LIMITS.tags)
      .refine((l) => new Set(l).size === l.length, 'Tags must not repeat.'),
    isPublic: z.boolean('Must be true or false.'),
    version,
  }
  const create = z
    .strictObject({
      ...fields,
      description: fields.description.optional(),
      tools: fields.tools.optional(),
      parameters: fields.parameters.optional(),
      tags: fields.tags.optional(),
      isPublic: fields.isPublic.optional(),
      version: fields.version.optional(),
    })
    .transform((b) => ({
      ...b,
      description: b.description ?? '',
      tools: b.tools ?? [],
      parameters: b.parameters ?? null,
      tags: b.tags ?? [],
      isPublic: b.isPublic ?? false,
      version: b.version ?? '1.0.0',
    }))
  const update = z.strictObject(fields).partial()
  return { create, update }
}
export type CustomSkillCreate = z.output<ReturnType<typeof customSkillSchemas>['create']>
export type CustomSkillPatch = z.output<ReturnType<typeof customSkillSchemas>['update']>

/** `GET /skills/registry` query: paging, a free-text `q` and one `tag`. */
export const registryQuery = z.strictObject({
  q: z.string().trim().min(1, 'At least 1 character.').max(100, 'At most 100 characters.').optional(),
  tag: tag.optional(),
})
