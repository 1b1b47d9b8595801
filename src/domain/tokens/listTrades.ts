import { z } from 'zod'
import { decodeTupleCursor, encodeTupleCursor } from '../paging.schema.ts'
import type { TokenPorts } from './ports.ts'
import type { ListTradesInput } from './tokens.schema.ts'
import { quoteUsd } from './tokenFigures.ts'
import { findToken } from './getToken.ts'

export type ListTradesDeps = Pick<TokenPorts, 'prices' | 'board'>

const tradeCursor = z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()])

/**
 * A token's indexed trades, newest first (`ours`: only those of this service's agents, or only
 * others'), with the trading agent where it is ours and the quote amount in USD.
 *
 * @example
 * const { trades, nextCursor } = await listTrades(deps, { address, limit: 20, ours: 'true' })
 */
export async function listTrades(deps: ListTradesDeps, input: ListTradesInput) {
  const t = await findToken(deps, input.address)
  const before = input.cursor === undefined ? undefined : decodeTupleCursor(input.cursor, tradeCursor)
  const [rows, prices] = await Promise.all([
    deps.board.trades({ token: t.address, limit: input.limit + 1, ours: input.ours === undefined ? undefined : input.ours === 'true', before }),
    deps.prices.quoteUsdOrPeg(),
  ])
  const page = rows.slice(0, input.limit)
  const last = page.at(-1)
  const decimals = deps.prices.deployment?.quoteAssets[t.quote_symbol]?.decimals
  const usd = prices.get(t.quote_symbol) ?? null
  return {
    token: t.address,
    quote: t.quote_symbol,
    trades: page.map((r) => ({
      txHash: r.tx_hash,
      logIndex: r.log_index,
      blockNumber: Number(r.block_number),
      at: new Date(r.at).toISOString(),
      trader: r.trader,
      agentId: r.agent_id,
      ours: r.ours,
      side: r.side,
      source: r.source,
      quoteAmount: r.quote_amount,
      tokenAmount: r.token_amount,
      creatorFee: r.creator_fee,
      platformFee: r.platform_fee,
      feeAsset: r.fee_asset,
      priceAfter: r.price_after,
      quoteAmountUsd: quoteUsd(BigInt(r.quote_amount), decimals, usd),
    })),
    nextCursor: rows.length > input.limit && last ? encodeTupleCursor([Number(last.block_number), last.log_index]) : null,
  }
}
