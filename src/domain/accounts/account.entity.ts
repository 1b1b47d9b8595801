import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

export const AccountSchema = defineEntity({
  name: 'Account',
  tableName: 'account',
  properties: {
    id: p.uuid().primary(),
    name: p.text(),
    address: p.text().nullable(),
    isOperator: p.boolean().default(false),
    /**
     * The credit balance: the running sum of the account's ledger (credit_entry) less the charges
     * not folded into it yet (`credits_balance`, Migration20261207130000_credit_fold). Read only.
     */
    credits: p.bigint('number').formula((cols) => `credits_balance(${cols}.id)`),
    /** Credits held by calls in flight (credit_reservation); never more than `credits`. */
    creditsReserved: p.bigint('number').default(0),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
})
export type Account = InferEntity<typeof AccountSchema>
