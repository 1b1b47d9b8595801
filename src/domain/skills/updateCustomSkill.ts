import { NotFoundError } from '../errors.ts'
import type { SkillsDeps } from './ports.ts'
import type { CustomSkillPatch } from './skill.schema.ts'
import { assertRegistryTools } from './createCustomSkill.ts'
import { customSkillView, type CustomSkill } from './customSkillView.ts'

export type UpdateCustomSkillInput = { accountId: string; id: string; patch: CustomSkillPatch }

/**
 * Changes the given fields of the account's custom skill. Agents that list it get the new
 * instructions and tools at their next chat turn or run; made private, it stops applying to other
 * accounts' agents (they keep the name in `skills`, which then grants nothing).
 */
export async function updateCustomSkill(deps: Pick<SkillsDeps, 'skills' | 'toolNames'>, input: UpdateCustomSkillInput): Promise<CustomSkill> {
  assertRegistryTools(deps.toolNames, input.patch.tools)
  const skill = await deps.skills.update(input.accountId, input.id, input.patch)
  if (!skill) throw new NotFoundError('Custom skill')
  return customSkillView(skill)
}
