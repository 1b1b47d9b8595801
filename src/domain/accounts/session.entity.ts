import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

export const SessionSchema = defineEntity({
  name: 'Session',
  tableName: 'session',
  properties: {
    idHash: p.text().primary(),
    accountId: p.uuid(),
    csrfToken: p.text(),
    expiresAt: p.datetime(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
})
export type Session = InferEntity<typeof SessionSchema>
