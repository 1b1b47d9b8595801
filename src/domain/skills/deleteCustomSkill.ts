import { NotFoundError } from '../errors.ts'
import type { SkillsDeps } from './ports.ts'
import { customSkillView, type CustomSkill } from './customSkillView.ts'

export type DeleteCustomSkillInput = { accountId: string; id: string }

/**
 * Deletes the account's custom skill and answers it. Agents that list it keep the name in their
 * `skills`, which then grants nothing (as a skill made private does for other accounts' agents).
 */
export async function deleteCustomSkill(deps: Pick<SkillsDeps, 'skills'>, input: DeleteCustomSkillInput): Promise<CustomSkill & { deleted: true }> {
  const skill = await deps.skills.delete(input.accountId, input.id)
  if (!skill) throw new NotFoundError('Custom skill')
  return { ...customSkillView(skill), deleted: true }
}
