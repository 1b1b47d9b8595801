import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

export const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_key',
  properties: {
    id: p.uuid().primary(),
    accountId: p.uuid(),
    name: p.text(),
    hash: p.text(),
    hint: p.text(),
    scopes: p.array(),
    expiresAt: p.datetime().nullable(),
    lastUsedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
})
export type ApiKey = InferEntity<typeof ApiKeySchema>
