/** 1 credit = 0.001 USD. */
export const CREDITS_PER_USD = 1000

export type TokenPrices = { inputCreditsPerMillion: number; outputCreditsPerMillion: number }

/**
 * What a model call costs in credits: ceil((in_tokens x in_price + out_tokens x out_price) / 1e6),
 * prices in credits per million tokens. Integer arithmetic (BigInt) so large counts stay exact.
 *
 * @example
 * modelCallCredits({ promptTokens: 1000, completionTokens: 500 }, { inputCreditsPerMillion: 150, outputCreditsPerMillion: 600 }) // 1
 */
export function modelCallCredits(usage: { promptTokens: number; completionTokens: number }, prices: TokenPrices): number {
  for (const n of [usage.promptTokens, usage.completionTokens, prices.inputCreditsPerMillion, prices.outputCreditsPerMillion]) {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`token counts and prices must be non-negative integers (got ${n})`)
  }
  const micro = BigInt(usage.promptTokens) * BigInt(prices.inputCreditsPerMillion) + BigInt(usage.completionTokens) * BigInt(prices.outputCreditsPerMillion)
  return Number((micro + 999_999n) / 1_000_000n)
}

/**
 * The most a call can cost: the whole context window's worth of prompt plus `maxTokens` of
 * answer. What a caller reserves before the call.
 *
 * @example
 * worstCaseCredits({ promptTokens: 2000, maxTokens: 1000 }, model)
 */
export function worstCaseCredits({ promptTokens, maxTokens }: { promptTokens: number; maxTokens: number }, prices: TokenPrices): number {
  return modelCallCredits({ promptTokens, completionTokens: maxTokens }, prices)
}

/** Credits as USD, a number as the reference client reads `cost` (credits are integers, so this is exact to 0.001). */
export function creditsToUsd(credits: number): number {
  return credits / CREDITS_PER_USD
}
