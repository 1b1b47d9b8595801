import { NotFoundError } from '../errors.ts'
import type { SkillsDeps } from './ports.ts'
import { customSkillView, type CustomSkill } from './customSkillView.ts'

export type GetCustomSkillInput = { accountId: string; id: string }

/** One custom skill of the account; another account's (public or not) is 404 here. */
export async function getCustomSkill(deps: Pick<SkillsDeps, 'skills'>, input: GetCustomSkillInput): Promise<CustomSkill> {
  const skill = await deps.skills.findOwned(input.accountId, input.id)
  if (!skill) throw new NotFoundError('Custom skill')
  return customSkillView(skill)
}
