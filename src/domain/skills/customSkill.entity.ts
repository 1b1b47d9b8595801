import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/** A custom skill of an account (data only). Unique by (account, slug). */
export const CustomSkillSchema = defineEntity({
  name: 'CustomSkill',
  tableName: 'custom_skill',
  properties: {
    id: p.uuid().primary(),
    accountId: p.uuid(),
    slug: p.text(),
    name: p.text(),
    description: p.text(),
    instructions: p.text(),
    tools: p.array(),
    parameters: p.json<Record<string, unknown>>().nullable(),
    tags: p.array(),
    isPublic: p.boolean().default(false),
    version: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
})
export type CustomSkill = InferEntity<typeof CustomSkillSchema>
