import { z } from 'zod'

/** A token: a symbol (ETH, USDC, TSLAx, a launched token's unique symbol) or a 0x address. */
const tokenRef = z
  .string('A token symbol or 0x address.')
  .min(1, 'A token symbol or 0x address.')
  .max(64, 'A token symbol or 0x address.')
  .regex(/^(0x[0-9a-fA-F]{40}|[A-Za-z0-9$._-]{1,32})$/, 'A token symbol (e.g. ETH, USDC, TSLAx) or a 0x address.')

/** Body of POST /swap/quote and /swap/execute (camelCase). */
export const swapBody = z.strictObject({
  agentId: z.uuid('Must be an agent id.'),
  tokenIn: tokenRef,
  tokenOut: tokenRef,
  amountIn: z
    .string('A decimal amount as a string, such as "1.5".')
    .regex(/^\d{1,40}(\.\d{1,40})?$/, 'A decimal amount as a string, such as "1.5".')
    .refine((v) => /[1-9]/.test(v), 'Must be greater than 0.'),
  slippageBps: z.number('An integer number of basis points, 1-5000.').int('An integer number of basis points, 1-5000.').min(1, 'At least 1 bps.').max(5000, 'At most 5000 bps (50%).').default(100),
  acknowledgeUnverified: z.boolean('Must be true or false.').optional(),
  quoteId: z.uuid('Must be a quote id from POST /swap/quote.').optional(),
})
export type SwapBody = z.infer<typeof swapBody>
