import { z } from 'zod'
import type { Address } from 'viem'
import { text } from '../util/text.ts'
import { timeParam } from '../intel/intel.schema.ts'

const agentId = z.uuid('Must be an agent id.')

/**
 * What a transfer asks for: the body of POST /wallet/transfer and of its preview, the OpenAPI
 * document's schema and (without `agentId`, which the front door binds) the `wallet_transfer`
 * tool's arguments. `to` is lower-cased.
 */
export const transferInput = z.strictObject({
  agentId,
  to: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'Must be a 0x-prefixed 20-byte hex address.')
    .transform((a) => a.toLowerCase() as Address),
  token: text({ min: 1, max: 64 }),
  amount: z
    .string()
    .regex(/^\d{1,30}(\.\d{1,36})?$/, 'A decimal amount such as "1.5".')
    .refine((v) => /[1-9]/.test(v), 'Must be greater than 0.'),
})
export type TransferInput = z.infer<typeof transferInput>

/** The query of GET /wallet/portfolio. */
export const portfolioInput = z.strictObject({ agentId })
export type PortfolioInput = z.infer<typeof portfolioInput>

/** The query of GET /portfolio (the reference client's getPortfolio): one of the account's agent wallets. */
export const walletPortfolioQuery = z.strictObject({
  wallet: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'Must be a 0x-prefixed 20-byte hex address.').transform((a) => a.toLowerCase()),
})

/** The query of GET /agents/:id/performance: a time range (ISO 8601 or Unix seconds) and the step between points. */
export const performanceQuery = z.strictObject({
  from: timeParam.optional(),
  to: timeParam.optional(),
  interval: z.enum(['1h', '4h', '1d'], 'One of 1h, 4h, 1d.').default('1d'),
})
export type PerformanceQuery = z.infer<typeof performanceQuery>
