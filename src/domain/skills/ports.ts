import type { CustomSkillCreate, CustomSkillPatch } from './skill.schema.ts'

/** A custom skill as stored: the account's data, never code. */
export type CustomSkillRecord = {
  id: string
  accountId: string
  slug: string
  name: string
  description: string
  instructions: string
  tools: string[]
  parameters: Record<string, unknown> | null
  tags: string[]
  isPublic: boolean
  version: string
  /** ISO 8601. */
  createdAt: string
  updatedAt: string
  /** The creation time as the database sent it (full precision), for list cursors. */
  cursorAt: string
}

/** A public custom skill as the registry lists it. */
export type RegistryEntry = {
  id: string
  slug: string
  name: string
  description: string
  /** The publishing account's id: agents name the skill `author/slug`. */
  author: string
  tags: string[]
  version: string
  /** Agents (not deleted) that list the skill. */
  installs: number
  cursorAt: string
}

export type Page = { limit: number; after?: { createdAt: string; id: string } | undefined }

/**
 * Custom skills' storage (src/adapters/db/customSkills.repository.ts). Every read of one account's skills
 * is scoped by account: another account's skill is absent, exactly like a missing one.
 */
export interface CustomSkillsRepository {
  /** Inserts the skill; throws SkillSlugTakenError when the account has one with this slug. */
  insert(skill: CustomSkillCreate & { id: string; accountId: string }): Promise<CustomSkillRecord>
  /** The account's skill, or undefined. */
  findOwned(accountId: string, id: string): Promise<CustomSkillRecord | undefined>
  /** The account's skills, newest first. */
  list(accountId: string, page: Page): Promise<CustomSkillRecord[]>
  /** Changes the given fields; undefined when the account has no such skill; SkillSlugTakenError on a slug clash. */
  update(accountId: string, id: string, patch: CustomSkillPatch): Promise<CustomSkillRecord | undefined>
  /** Deletes it; undefined when the account has no such skill. */
  delete(accountId: string, id: string): Promise<CustomSkillRecord | undefined>
  /**
   * The skills these references name, for `accountId`: its own by slug, anyone's public ones by
   * (author, slug). A private skill of another account is not returned.
   */
  findUsable(accountId: string, refs: Array<{ author: string | undefined; slug: string }>): Promise<CustomSkillRecord[]>
  /** Public skills of every account, newest first, matching `q` (slug, name, description) and `tag`. */
  registry(query: { q?: string | undefined; tag?: string | undefined } & Page): Promise<RegistryEntry[]>
}

/** What the custom skill use cases need: the storage and the tool registry's names. */
export type SkillsDeps = {
  skills: CustomSkillsRepository
  /** Every tool a skill may name: the registry's tools and the planned ones the built-in skills name. */
  toolNames: ReadonlySet<string>
  newId(): string
}
