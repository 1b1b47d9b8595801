import { z } from 'zod'
import { decodeTupleCursor, encodeTupleCursor } from '../paging.schema.ts'
import type { BoardRow, TokenPorts } from './ports.ts'
import type { ListTokensInput } from './tokens.schema.ts'
import { tokenFigures } from './tokenFigures.ts'
import { tokenView } from './tokenResource.ts'

export type ListTokensDeps = Pick<TokenPorts, 'prices' | 'board'>

const boardCursor = z.tuple([z.number().int(), z.string().max(42)])

/**
 * The token board, newest first: every indexed token with its price, market cap, 24 h volume and
 * change (from the index; USD at the quote asset's price), paged by an opaque cursor.
 *
 * @example
 * const page = await listTokens(deps, { limit: 20, venue: 'venue-a' })
 * const next = page.nextCursor && (await listTokens(deps, { limit: 20, cursor: page.nextCursor }))
 */
export async function listTokens(deps: ListTokensDeps, input: ListTokensInput) {
  const before = input.cursor === undefined ? undefined : decodeTupleCursor(input.cursor, boardCursor)
  const chainId = deps.prices.deployment?.chainId
  const [rows, prices] = await Promise.all([
    deps.board.list({ chainId, limit: input.limit + 1, venue: input.venue, before }),
    deps.prices.quoteUsdOrPeg(),
  ])
  const page = rows.slice(0, input.limit)
  const last = page.at(-1)
  return {
    tokens: page.map((t) => ({ ...tokenView(t), ...boardFigures(deps, t, prices) })),
    nextCursor: rows.length > input.limit && last ? encodeTupleCursor([Number(last.block_number), last.address]) : null,
  }
}

function boardFigures(deps: ListTokensDeps, t: BoardRow, prices: Map<string, bigint>) {
  return tokenFigures({
    totalSupply: BigInt(t.total_supply),
    price: t.price === null ? null : BigInt(t.price),
    price24hAgo: t.price_24h_ago === null ? null : BigInt(t.price_24h_ago),
    volume24h: BigInt(t.volume_24h),
    quoteDecimals: deps.prices.deployment?.quoteAssets[t.quote_symbol]?.decimals,
    quoteUsd18: prices.get(t.quote_symbol) ?? null,
  })
}
