import { z } from 'zod'
import { limitQuery } from '../paging.schema.ts'

/**
 * What the token use cases take, as the HTTP queries carry it (strings); the OpenAPI document
 * shows these, and the token tools take the same fields.
 */
export const quotesQuery = z.strictObject({ venue: z.enum(['venue-a', 'venue-b'], 'One of venue-a, venue-b.') })
export const boardQuery = z.strictObject({
  limit: limitQuery,
  cursor: z.string().max(200).optional(),
  venue: z.enum(['venue-a', 'venue-b', 'self-funded']).optional(),
})
export const tradesQuery = z.strictObject({
  limit: limitQuery,
  cursor: z.string().max(200).optional(),
  ours: z.enum(['true', 'false'], 'Must be true or false.').optional(),
})

const list = z.union([z.string().max(5000), z.array(z.string().max(5000)).max(100)])
/** Lenient on unknown parameters: external price clients send their own extras. Prices are in USD only. */
export const priceQuery = z.object({
  tokens: list.optional(),
  mint: list.optional(),
  currency: z.string().max(100).refine((c) => c.toLowerCase() === 'usd', 'Only usd is supported.').optional(),
})

export type ListQuoteAssetsInput = z.infer<typeof quotesQuery>
export type ListTokensInput = z.infer<typeof boardQuery>
/** A token address as a path names it (anything else is not found). */
export type GetTokenInput = { address: string | undefined }
export type ListTradesInput = z.infer<typeof tradesQuery> & GetTokenInput
/** Tokens named by symbol or address; `field` names the query parameter that errors point at. */
export type GetPriceInput = { tokens: string[]; field: 'tokens' | 'mint' }

/** A token address: lower-cased. */
export const tokenAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/).transform((a) => a.toLowerCase())

/**
 * Comma-separated (or repeated) values, trimmed, empty ones dropped, duplicates (any case) removed.
 *
 * @example
 * splitList(['ETH,usdc', 'USDC ']) // ['ETH', 'usdc']
 */
export function splitList(value: string | string[] | undefined): string[] {
  const seen = new Set<string>()
  const out: string[] = []
  for (const part of [value ?? []].flat().flatMap((v) => v.split(','))) {
    const t = part.trim()
    if (!t || seen.has(t.toLowerCase())) continue
    seen.add(t.toLowerCase())
    out.push(t)
  }
  return out
}

/**
 * The tokens a price request names and the parameter its errors point at (`mint` for the
 * one-token form `?mint=…&currency=usd`).
 *
 * @example
 * readPriceRequest({ tokens: 'ETH,USDC' }) // { tokens: ['ETH', 'USDC'], field: 'tokens' }
 */
export function readPriceRequest(q: z.infer<typeof priceQuery>): GetPriceInput {
  const field = q.tokens === undefined && q.mint !== undefined ? 'mint' : 'tokens'
  return { tokens: splitList([q.tokens ?? [], q.mint ?? []].flat()), field }
}
