import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

export const AccountSchema = defineEntity({
  name: 'Account',
  tableName: 'account',
  properties: {
    id: p.uuid().primary(),
    name: p.text(),
    address: p.text().nullable(),
    isOperator: p.boolean().default(false),
    /** The credit balance: the running sum of the account's ledger (credit_entry). */
    credits: p.bigint('number').default(0),
    /** Credits held by calls in flight (credit_reservation); never more than `credits`. */
    creditsReserved: p.bigint('number').default(0),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
})
export type Account = InferEntity<typeof AccountSchema>
