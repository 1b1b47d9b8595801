import { z } from 'zod'
import { customSkillSchemas } from '../domain/skills/skill.schema.ts'
import { decodeCursor, encodeCursor } from '../domain/util/pageCursor.ts'
import { ValidationError } from '../domain/errors.ts'
import { fieldErrorsOf } from '../domain/fieldErrors.ts'
import { defineTool } from './tool.ts'

/** The body's shape for the tool list; the tool names are checked by the run with `core.customSkillSchemas`, as on the route. */
const shapes = customSkillSchemas({ toolNames: { has: () => true } as unknown as ReadonlySet<string> })

export const listCustomSkillsTool = defineTool({
  name: 'list_custom_skills',
  description:
    "List the account's custom skills, newest first: slug, name, description, instructions, the registry tools each " +
    'grants, tags, whether it is public. `limit` (1-100, default 20); `cursor` is the nextCursor of the previous page.',
  args: z.strictObject({
    limit: z.number('An integer from 1 to 100.').int('An integer from 1 to 100.').min(1, 'An integer from 1 to 100.').max(100, 'An integer from 1 to 100.').optional(),
    cursor: z.string('The nextCursor of the previous page.').max(200, 'The nextCursor of the previous page.').optional(),
  }),
  scope: 'read',
  movesFunds: false,
  agent: 'none',
  run: async ({ core, accountId }, { limit, cursor }) => {
    const { skills, last } = await core.listCustomSkills({ accountId, limit: limit ?? 20, after: decodeCursor(cursor) })
    return { skills, nextCursor: last ? encodeCursor(last.createdAt, last.id) : null }
  },
})

export const createCustomSkillTool = defineTool({
  name: 'create_custom_skill',
  description:
    'Create a custom skill for the account: a `slug` and `name`, `instructions` an agent with the skill follows, and the ' +
    'registry `tools` it grants (names from the tool list); optional description, tags, parameters, isPublic (listed in ' +
    'the public registry) and version. Agents use it by naming the slug in their skills (update_agent).',
  args: shapes.create.in,
  scope: 'trade',
  movesFunds: false,
  agent: 'none',
  run: async ({ core, accountId }, args) => {
    const parsed = core.customSkillSchemas.create.safeParse(args)
    if (!parsed.success) throw new ValidationError(fieldErrorsOf(parsed.error))
    return core.createCustomSkill({ accountId, skill: parsed.data })
  },
})
