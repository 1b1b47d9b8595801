import type { Page, SkillsDeps } from './ports.ts'

export type ListSkillRegistryInput = { q?: string | undefined; tag?: string | undefined } & Page

/**
 * The public registry: every account's public custom skills, newest first, with how many agents
 * use each (`installs`). `q` matches the slug, name or description (case-insensitive), `tag` one tag.
 */
export async function listSkillRegistry(deps: Pick<SkillsDeps, 'skills'>, { q, tag, limit, after }: ListSkillRegistryInput) {
  const rows = await deps.skills.registry({ q, tag, limit: limit + 1, after })
  const last = rows.length > limit ? rows[limit - 1] : undefined
  return {
    skills: rows.slice(0, limit).map((r) => ({
      slug: r.slug, name: r.name, description: r.description, author: r.author, ref: `${r.author}/${r.slug}`,
      tags: r.tags, version: r.version, installs: r.installs,
    })),
    last: last && { createdAt: last.cursorAt, id: last.id },
  }
}
