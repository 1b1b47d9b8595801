import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/** One ledger entry (append-only). MikroORM writes the starter grant with its account; the rest is SQL (src/adapters/db/credits.repository.ts). */
export const CreditEntrySchema = defineEntity({
  name: 'CreditEntry',
  tableName: 'credit_entry',
  properties: {
    id: p.uuid().primary(),
    accountId: p.uuid(),
    kind: p.text(),
    credits: p.bigint('number'),
    balanceAfter: p.bigint('number'),
    ref: p.text(),
    /** Its place in the account's ledger (1, 2, ...): the order of the balances after. */
    seq: p.bigint('number'),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
})
export type CreditEntryRecord = InferEntity<typeof CreditEntrySchema>
