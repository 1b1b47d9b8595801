import type { Page, SkillsDeps } from './ports.ts'
import { customSkillView, type CustomSkill } from './customSkillView.ts'

export type ListCustomSkillsInput = { accountId: string } & Page

/** The account's custom skills, newest first; `last` is the cursor position when there are more. */
export async function listCustomSkills(
  deps: Pick<SkillsDeps, 'skills'>,
  { accountId, limit, after }: ListCustomSkillsInput,
): Promise<{ skills: CustomSkill[]; last: { createdAt: string; id: string } | undefined }> {
  const rows = await deps.skills.list(accountId, { limit: limit + 1, after })
  const last = rows.length > limit ? rows[limit - 1] : undefined
  return { skills: rows.slice(0, limit).map(customSkillView), last: last && { createdAt: last.cursorAt, id: last.id } }
}
