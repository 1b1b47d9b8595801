import type { SkillsDeps } from './ports.ts'
import type { CustomSkillCreate } from './skill.schema.ts'
import { UnknownToolsError } from './errors.ts'
import { customSkillView, type CustomSkill } from './customSkillView.ts'

export type CreateCustomSkillInput = { accountId: string; skill: CustomSkillCreate }

/**
 * Stores a custom skill of the account (data only: instructions, tool names, a parameters schema).
 * A tool outside the registry is refused here too, whoever parsed the input; a slug the account
 * uses already is 409 `skill_slug_taken`.
 */
export async function createCustomSkill(deps: Pick<SkillsDeps, 'skills' | 'toolNames' | 'newId'>, input: CreateCustomSkillInput): Promise<CustomSkill> {
  assertRegistryTools(deps.toolNames, input.skill.tools)
  return customSkillView(await deps.skills.insert({ ...input.skill, id: deps.newId(), accountId: input.accountId }))
}

/** Throws a 422 naming every tool that the registry does not have. */
export function assertRegistryTools(toolNames: ReadonlySet<string>, tools: readonly string[] | undefined): void {
  const bad = (tools ?? []).flatMap((t, i) => (toolNames.has(t) ? [] : [i]))
  if (bad.length > 0) throw new UnknownToolsError(bad)
}
