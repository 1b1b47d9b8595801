import { BUILTIN_SKILLS, SKILL_SLUGS } from './builtinSkills.ts'
import type { CustomSkillRecord, SkillsDeps } from './ports.ts'
import { parseSkillRef } from './skill.schema.ts'
import { skillPrompt } from './skillPrompt.ts'

export type ResolveAgentSkillsInput = { accountId: string; skills: readonly string[] }

export type ResolvedSkills = {
  /** Tool names the skills grant (built-in and custom, never one outside the registry), sorted. */
  tools: string[]
  /** The skills' text for the system prompt; custom skills' delimited as untrusted. */
  instructions: string
  /** Entries of `skills` that name nothing usable now (deleted, made private, or never existed). */
  unavailable: string[]
}

/**
 * What an agent's `skills` give it at a chat turn or a run: the always-on and listed built-in
 * skills, plus the custom ones it may use (its account's by slug, public ones by `author/slug`).
 * A custom skill grants only registry tools; the caller still filters by scope and policy.
 *
 * @example
 * const { tools, instructions } = await core.resolveAgentSkills({ accountId, skills: agent.skills })
 */
export async function resolveAgentSkills(deps: Pick<SkillsDeps, 'skills' | 'toolNames'>, input: ResolveAgentSkillsInput): Promise<ResolvedSkills> {
  const listed = new Set(input.skills)
  const builtin = BUILTIN_SKILLS.filter((s) => s.alwaysOn || listed.has(s.slug))
  const custom = await findCustom(deps, input)
  const tools = new Set(builtin.flatMap((s) => s.tools))
  for (const s of custom.found) for (const t of s.tools) if (deps.toolNames.has(t)) tools.add(t)
  return { tools: [...tools].sort(), instructions: skillPrompt(builtin, custom.found), unavailable: custom.missing }
}

/**
 * The custom skills that `skills` name and `accountId` may use, in the order listed, and the
 * entries that name none (a built-in slug is never missing).
 */
export async function findCustom(deps: Pick<SkillsDeps, 'skills'>, { accountId, skills }: ResolveAgentSkillsInput) {
  const refs = skills.filter((s) => !SKILL_SLUGS.has(s)).map((ref) => ({ ref, parsed: parseSkillRef(ref) }))
  const wanted = refs.flatMap((r) => (r.parsed ? [r.parsed] : []))
  const rows = wanted.length > 0 ? await deps.skills.findUsable(accountId, wanted) : []
  const byRef = new Map<string, CustomSkillRecord>()
  for (const row of rows) {
    byRef.set(`${row.accountId}/${row.slug}`, row)
    if (row.accountId === accountId) byRef.set(row.slug, row)
  }
  const found: CustomSkillRecord[] = []
  const missing: string[] = []
  for (const { ref } of refs) {
    const row = byRef.get(ref)
    if (!row) missing.push(ref)
    else if (!found.includes(row)) found.push(row)
  }
  return { found, missing }
}
