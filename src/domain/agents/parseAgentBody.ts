import type { z } from 'zod'
import { ValidationError } from '../errors.ts'
import { fieldErrorsOf } from '../fieldErrors.ts'

/** What checks an agent body's custom skills against the database: `core.checkAgentSkills`. */
export type AgentSkillsCheck = { checkAgentSkills(input: { accountId: string; skills: string[] }): Promise<unknown> }

/**
 * Parses an agent body (create or update) and checks its custom skills against the database (the
 * account's own by slug, public ones as `author/slug`), so one 422 names every bad field,
 * `skills.<i>` included. The route and the agent tools parse with it alike.
 *
 * @example
 * const body = await parseAgentBody(core, accountId, core.agentSchemas.create, ctx.request.body)
 */
export async function parseAgentBody<T extends z.ZodType>(deps: AgentSkillsCheck, accountId: string, schema: T, raw: unknown): Promise<z.output<T>> {
  const parsed = schema.safeParse(raw)
  const errors = parsed.success ? {} : fieldErrorsOf(parsed.error)
  const skills = raw !== null && typeof raw === 'object' && 'skills' in raw ? (raw as { skills: unknown }).skills : undefined
  if (Array.isArray(skills) && skills.every((s) => typeof s === 'string')) {
    try {
      await deps.checkAgentSkills({ accountId, skills })
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err
      for (const [field, message] of Object.entries(err.fieldErrors ?? {})) (errors as Record<string, string>)[field] ??= message
    }
  }
  if (!parsed.success || Object.keys(errors).length > 0) throw new ValidationError(errors)
  return parsed.data
}
