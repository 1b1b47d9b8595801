import { z } from 'zod'

/** Every kind of ledger entry (DESIGN: credits and billing). */
export const CREDIT_KINDS = ['grant', 'deposit', 'model_usage', 'market_purchase', 'market_sale', 'market_fee', 'refund'] as const
export const creditKindSchema = z.enum(CREDIT_KINDS)
export type CreditKind = z.infer<typeof creditKindSchema>
