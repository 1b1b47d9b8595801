import type pg from 'pg'
import { UniqueConstraintViolationException } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { CustomSkillSchema, type CustomSkill } from '../../domain/skills/customSkill.entity.ts'
import { SkillSlugTakenError } from '../../domain/skills/errors.ts'
import type { CustomSkillRecord, CustomSkillsRepository, RegistryEntry } from '../../domain/skills/ports.ts'
import { isoTimestamp } from '../../domain/util/isoTimestamp.ts'

type SkillRow = {
  id: string
  account_id: string
  slug: string
  name: string
  description: string
  instructions: string
  tools: string[]
  parameters: Record<string, unknown> | null
  tags: string[]
  is_public: boolean
  version: string
  created_at: Date | string
  updated_at: Date | string
  cursor_at: string
}

const COLUMNS = `id, account_id, slug, name, description, instructions, tools, parameters, tags, is_public, version, created_at, updated_at,
  created_at::text as cursor_at`

const recordOfRow = (r: SkillRow): CustomSkillRecord => ({
  id: r.id,
  accountId: r.account_id,
  slug: r.slug,
  name: r.name,
  description: r.description,
  instructions: r.instructions,
  tools: r.tools,
  parameters: r.parameters,
  tags: r.tags,
  isPublic: r.is_public,
  version: r.version,
  createdAt: isoTimestamp(r.created_at),
  updatedAt: isoTimestamp(r.updated_at),
  cursorAt: r.cursor_at,
})

const recordOfEntity = (e: CustomSkill): CustomSkillRecord => ({
  id: e.id,
  accountId: e.accountId,
  slug: e.slug,
  name: e.name,
  description: e.description,
  instructions: e.instructions,
  tools: e.tools,
  parameters: e.parameters ?? null,
  tags: e.tags,
  isPublic: e.isPublic,
  version: e.version,
  createdAt: isoTimestamp(e.createdAt),
  updatedAt: isoTimestamp(e.updatedAt),
  cursorAt: e.createdAt.toISOString(),
})

/** `%` and `_` match themselves in a `q` search. */
const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/**
 * Custom skills over MikroORM (`CustomSkill` entity) for one skill's reads and writes, and SQL for
 * the lists: their cursors keep PostgreSQL's microseconds (a JavaScript Date drops them, so a page
 * could repeat or skip a row), and the registry finds each skill's users in the same statement
 * (agents whose `skills` name it: by slug in the author's account, as `author/slug` in any), over
 * the GIN index on `agent.skills`; the installs are those of them not deleted, whose states
 * `agentStates` answers for the whole page in one read (an agent's state is its actor's).
 *
 * @example
 * const skills = createCustomSkillsRepository({ pool, em, agentStates: (ids) => runtime.read.statesOf('agent', ids) })
 * await skills.findUsable(accountId, [{ author: undefined, slug: 'dca' }])
 */
export function createCustomSkillsRepository({ pool, em, agentStates }: {
  pool: pg.Pool
  em: EntityManager
  /** The state of each agent among `ids` (absent: no such agent), in one read. */
  agentStates: (ids: readonly string[]) => Promise<ReadonlyMap<string, string>>
}): CustomSkillsRepository {
  async function flushOrSlugTaken(fork: EntityManager, slug: string) {
    try {
      await fork.flush()
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw new SkillSlugTakenError(slug)
      throw err
    }
  }

  return {
    async insert(skill) {
      const fork = em.fork()
      const entity = fork.create(CustomSkillSchema, {
        id: skill.id, accountId: skill.accountId, slug: skill.slug, name: skill.name, description: skill.description,
        instructions: skill.instructions, tools: skill.tools, parameters: skill.parameters, tags: skill.tags,
        isPublic: skill.isPublic, version: skill.version,
      })
      await flushOrSlugTaken(fork, skill.slug)
      return recordOfEntity(entity)
    },

    async findOwned(accountId, id) {
      const entity = await em.fork().findOne(CustomSkillSchema, { id, accountId })
      return entity ? recordOfEntity(entity) : undefined
    },

    async list(accountId, { limit, after }) {
      const params: unknown[] = [accountId, limit]
      const cond = after ? `and (created_at, id) < ($${params.push(after.createdAt)}::timestamptz, $${params.push(after.id)}::uuid)` : ''
      const { rows } = await pool.query<SkillRow>(
        `select ${COLUMNS} from custom_skill where account_id = $1 ${cond} order by created_at desc, id desc limit $2`,
        params,
      )
      return rows.map(recordOfRow)
    },

    async update(accountId, id, patch) {
      const fork = em.fork()
      const entity = await fork.findOne(CustomSkillSchema, { id, accountId })
      if (!entity) return undefined
      const { parameters, ...rest } = patch
      fork.assign(entity, Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)))
      if (parameters !== undefined) entity.parameters = parameters
      await flushOrSlugTaken(fork, patch.slug ?? entity.slug)
      return recordOfEntity(entity)
    },

    async delete(accountId, id) {
      const fork = em.fork()
      const entity = await fork.findOne(CustomSkillSchema, { id, accountId })
      if (!entity) return undefined
      await fork.remove(entity).flush()
      return recordOfEntity(entity)
    },

    async findUsable(accountId, refs) {
      const own = refs.filter((r) => r.author === undefined || r.author === accountId).map((r) => r.slug)
      const pub = refs.filter((r) => r.author !== undefined && r.author !== accountId)
      const { rows } = await pool.query<SkillRow>(
        `select ${COLUMNS} from custom_skill
          where (account_id = $1 and slug = any($2::text[]))
             or (is_public and (account_id::text, slug) in (select * from unnest($3::text[], $4::text[])))`,
        [accountId, own, pub.map((r) => r.author), pub.map((r) => r.slug)],
      )
      return rows.map(recordOfRow)
    },

    async registry({ q, tag, limit, after }) {
      const params: unknown[] = [limit]
      const conds = ['s.is_public']
      if (q) conds.push(`(s.slug ilike $${params.push(likePattern(q))} or s.name ilike $${params.length} or s.description ilike $${params.length})`)
      if (tag) conds.push(`s.tags @> array[$${params.push(tag)}::text]`)
      if (after) conds.push(`(s.created_at, s.id) < ($${params.push(after.createdAt)}::timestamptz, $${params.push(after.id)}::uuid)`)
      const { rows } = await pool.query<SkillRow & { users: string[] }>(
        `select s.id, s.account_id, s.slug, s.name, s.description, s.tags, s.version, s.created_at::text as cursor_at,
                array(select a.id::text from agent a
                  where a.skills @> array[s.account_id::text || '/' || s.slug]
                     or (a.account_id = s.account_id and a.skills @> array[s.slug])) as users
           from custom_skill s
          where ${conds.join(' and ')}
          order by s.created_at desc, s.id desc
          limit $1`,
        params,
      )
      const states = await agentStates([...new Set(rows.flatMap((r) => r.users))])
      const live = (id: string) => states.has(id) && states.get(id) !== 'deleted'
      return rows.map((r): RegistryEntry => ({
        id: r.id, slug: r.slug, name: r.name, description: r.description, author: r.account_id, tags: r.tags,
        version: r.version, installs: r.users.filter(live).length, cursorAt: r.cursor_at,
      }))
    },
  }
}
