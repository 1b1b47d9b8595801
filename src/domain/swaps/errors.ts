import type { Address } from 'viem'
import { ServiceError } from '../errors.ts'

/** 422 `quote_expired`: the quote is unknown, expired or another account's. */
export class QuoteExpiredError extends ServiceError {
  constructor() {
    super('This quote expired (quotes are valid 30 seconds) or is unknown; ask for a new one.', { code: 'quote_expired', status: 422 })
  }
}

/** 422 `quote_mismatch`: the execute body asks for another swap than the quote. */
export class QuoteMismatchError extends ServiceError {
  constructor() {
    super('This quote was for another agent, pair of tokens, amount or slippage; send the same fields as the quote.', {
      code: 'quote_mismatch',
      status: 422,
    })
  }
}

/** 409 `quote_used`: the quote already executed once (a quote is single-use). */
export class QuoteUsedError extends ServiceError {
  constructor({ swapId }: { swapId: string | null }) {
    super(`This quote was already executed${swapId ? ` (swap ${swapId})` : ''}; a quote executes once. Ask for a new one.`, {
      code: 'quote_used',
      status: 409,
    })
  }
}

/** 422 `unverified_token`: a token of the swap is not verified and the request did not acknowledge it. */
export class UnverifiedTokenError extends ServiceError {
  constructor({ tokens }: { tokens: Array<{ symbol: string; address: Address }> }) {
    super(
      `${tokens.map((t) => `${t.symbol} (${t.address})`).join(' and ')} ${tokens.length > 1 ? 'are' : 'is'} not verified; ` +
        'send acknowledgeUnverified: true to trade it anyway.',
      { code: 'unverified_token', status: 422 },
    )
  }
}

/** 422 `slippage_exceeded`: the swap would return less than its minAmountOut; `message` re-raises a recorded refusal. */
export class SlippageExceededError extends ServiceError {
  constructor(p: { minAmountOut: string; symbol: string } | { message: string }) {
    super(
      'message' in p
        ? p.message
        : `The price moved: this swap would now return less than minAmountOut (${p.minAmountOut} ${p.symbol}). Quote again, or allow more slippageBps.`,
      { code: 'slippage_exceeded', status: 422 },
    )
  }
}
