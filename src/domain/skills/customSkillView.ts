import type { CustomSkillRecord } from './ports.ts'

/**
 * A custom skill as the API shows it (camelCase). `ref` is how another account's agent names it
 * once it is public (`author/slug`); the owner's own agents may use the bare slug.
 */
export function customSkillView(s: CustomSkillRecord) {
  return {
    id: s.id,
    slug: s.slug,
    ref: `${s.accountId}/${s.slug}`,
    author: s.accountId,
    name: s.name,
    description: s.description,
    instructions: s.instructions,
    tools: s.tools,
    parameters: s.parameters,
    tags: s.tags,
    isPublic: s.isPublic,
    version: s.version,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  }
}
export type CustomSkill = ReturnType<typeof customSkillView>
