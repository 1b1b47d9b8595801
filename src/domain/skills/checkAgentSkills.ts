import type { SkillsDeps } from './ports.ts'
import { UnknownSkillsError } from './errors.ts'
import { findCustom, type ResolveAgentSkillsInput } from './resolveAgentSkills.ts'

/**
 * Refuses (422, `skills.<i>` per bad entry) an agent's `skills` that name a skill the account may
 * not use: no such skill, or another account's private one (refused exactly like a missing one, so
 * its existence does not leak). Used when an agent is created or its skills are changed.
 */
export async function checkAgentSkills(deps: Pick<SkillsDeps, 'skills'>, input: ResolveAgentSkillsInput): Promise<void> {
  const { missing } = await findCustom(deps, input)
  if (missing.length === 0) return
  const bad = new Set(missing)
  throw new UnknownSkillsError(input.skills.flatMap((s, i) => (bad.has(s) ? [i] : [])))
}
