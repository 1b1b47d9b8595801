import { z } from 'zod'
import { decodeTupleCursor, encodeTupleCursor, limitQuery } from '../paging.schema.ts'
import { isPostgresTimestamp } from '../util/pageCursor.ts'

const credits = z.number().int('An integer number of credits.').min(1, 'At least 1 credit.').max(1_000_000_000_000, 'At most 10^12 credits.')

/** `POST /market` (camelCase): sell one of your agents. */
export const createListingBody = z.strictObject({
  agentId: z.uuid('An agent id (uuid).'),
  priceCredits: credits,
  description: z.string().trim().max(2000, 'At most 2000 characters.').optional(),
})
export type CreateListingBody = z.infer<typeof createListingBody>

/** `GET /market`: active listings, newest first unless `sort=price` (cheapest first). */
export const browseListingsQuery = z.strictObject({
  limit: limitQuery,
  cursor: z.string().max(300).optional(),
  sort: z.enum(['newest', 'price']).default('newest'),
  maxPriceCredits: z
    .string()
    .regex(/^[0-9]{1,13}$/, 'A whole number of credits.')
    .transform(Number)
    .optional(),
})
export type BrowseListingsQuery = z.infer<typeof browseListingsQuery>

/** `POST /market/:id/bids`: reserve `credits` of yours as an offer for the listing. */
export const placeBidBody = z.strictObject({ credits })
export type PlaceBidBody = z.infer<typeof placeBidBody>

/** `GET /market/history`, `GET /market/bids`, `GET /market/bids/received`: the account's own, newest first. */
export const ownPageQuery = z.strictObject({ limit: limitQuery, cursor: z.string().max(300).optional() })

/** A page position: the sort key (created time as PostgreSQL takes it, or the price) and the id. */
export type ListingCursor = { key: string | number; id: string }
export const encodeListingCursor = (c: ListingCursor) => encodeTupleCursor([c.key, c.id])
export function decodeListingCursor(cursor: string | undefined, by: 'time' | 'price' = 'time'): ListingCursor | undefined {
  if (cursor === undefined) return undefined
  const key = by === 'time' ? z.string().max(64).refine(isPostgresTimestamp) : z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)
  const [k, id] = decodeTupleCursor(cursor, z.tuple([key, z.uuid()]))
  return { key: k, id }
}
