import { z } from 'zod'
import type { FieldErrors } from '../errors.ts'
import { emptyFieldErrors, fieldErrorsOf } from '../fieldErrors.ts'

/** A token: a symbol (ETH, USDC, TSLAx, a launched token's unique symbol) or a 0x address. */
export const tokenRef = z
  .string('A token symbol or 0x address.')
  .min(1, 'A token symbol or 0x address.')
  .max(64, 'A token symbol or 0x address.')
  .regex(/^(0x[0-9a-fA-F]{40}|[A-Za-z0-9$._-]{1,32})$/, 'A token symbol (e.g. ETH, USDC, TSLAx) or a 0x address.')

/** An amount of a token in its whole units, as a decimal string greater than 0. */
export const tokenAmount = z
  .string('A decimal amount as a string, such as "1.5".')
  .regex(/^\d{1,40}(\.\d{1,40})?$/, 'A decimal amount as a string, such as "1.5".')
  .refine((v) => /[1-9]/.test(v), 'Must be greater than 0.')

/** Slippage tolerance in basis points. */
export const slippageBps = z.number('An integer number of basis points, 1-5000.').int('An integer number of basis points, 1-5000.').min(1, 'At least 1 bps.').max(5000, 'At most 5000 bps (50%).')

/**
 * What a swap asks for (camelCase): the body of POST /swap/quote and /swap/execute, the OpenAPI
 * document's schema and, next, the swap tools' arguments.
 */
export const swapInput = z.strictObject({
  agentId: z.uuid('Must be an agent id.'),
  tokenIn: tokenRef,
  tokenOut: tokenRef,
  amountIn: tokenAmount,
  slippageBps: slippageBps.default(100),
  acknowledgeUnverified: z.boolean('Must be true or false.').optional(),
  quoteId: z.uuid('Must be a quote id from POST /swap/quote.').optional(),
})
export type SwapInput = z.infer<typeof swapInput>

/**
 * A swap request as a front door hands it to the use cases: the account, the fields that parsed,
 * and the errors of those that did not. The use case adds what only lookups find (no such agent,
 * too many decimals for the token) so that one 422 names every bad field.
 */
export type SwapRequest = { accountId: string; fields: Partial<SwapInput>; fieldErrors: FieldErrors }

/**
 * Parses a swap request field by field (a bad field does not hide the others).
 *
 * @example
 * const request = readSwapRequest(principal.accountId, ctx.request.body)
 * await core.quoteSwap(request)
 */
export function readSwapRequest(accountId: string, raw: unknown): SwapRequest {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return { accountId, fields: {}, fieldErrors: { body: 'Expected a JSON object.' } }
  const parsed = swapInput.safeParse(raw)
  if (parsed.success) return { accountId, fields: parsed.data, fieldErrors: emptyFieldErrors() }
  const fieldErrors = fieldErrorsOf(parsed.error)
  const fields: Record<string, unknown> = {}
  for (const key of Object.keys(swapInput.shape) as Array<keyof SwapInput>) {
    if (fieldErrors[key]) continue
    const r = swapInput.shape[key].safeParse((raw as Record<string, unknown>)[key])
    if (r.success && r.data !== undefined) fields[key] = r.data
  }
  return { accountId, fields: fields as Partial<SwapInput>, fieldErrors }
}
