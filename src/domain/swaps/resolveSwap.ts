import { parseUnits } from 'viem'
import { ValidationError } from '../errors.ts'
import { assertNotListed } from '../agents/listedAgent.ts'
import { emptyFieldErrors } from '../fieldErrors.ts'
import type { SwapInput, SwapRequest } from './swap.schema.ts'
import type { SwapAgent, SwapPorts, SwapToken } from './ports.ts'
import { amountDecimalsError, sameTokenError } from './swapRules.ts'
import { isPaperAddress } from '../paper/paperAddress.ts'
import { PaperTokenSwapUnsupportedError } from '../paper/errors.ts'

export type ResolvedSwap = { input: SwapInput; agent: SwapAgent; tokenIn: SwapToken; tokenOut: SwapToken; amountIn: bigint }
export type ResolveSwapDeps = Pick<SwapPorts, 'agents' | 'tokens'>

/**
 * Checks every field of a swap request against the account, the chain and each other: one 422
 * names them all (with those the parse already refused).
 */
export async function resolveSwap(deps: ResolveSwapDeps, request: SwapRequest, mode: 'quote' | 'execute'): Promise<ResolvedSwap> {
  const { accountId, fields } = request
  // A paper launch's virtual token has no market to trade on (docs/api.md, "Paper agents"): said so, not "unknown token".
  for (const field of ['tokenIn', 'tokenOut'] as const) if (fields[field] && isPaperAddress(fields[field])) throw new PaperTokenSwapUnsupportedError(field)
  const errors = Object.assign(emptyFieldErrors(), request.fieldErrors)
  const [agent, tokenIn, tokenOut] = await Promise.all([
    fields.agentId ? deps.agents.forSwap(accountId, fields.agentId) : undefined,
    fields.tokenIn ? deps.tokens.lookup(fields.tokenIn) : undefined,
    fields.tokenOut ? deps.tokens.lookup(fields.tokenOut) : undefined,
  ])
  if (fields.agentId && !agent) errors.agentId = 'No such agent in this account.'
  else if (agent?.status === 'deleted') errors.agentId = 'The agent is deleted.'
  if (mode === 'execute' && agent) assertNotListed(agent, 'swap')
  if (tokenIn && 'error' in tokenIn) errors.tokenIn = tokenIn.error
  if (tokenOut && 'error' in tokenOut) errors.tokenOut = tokenOut.error
  const tin = tokenIn && 'token' in tokenIn ? tokenIn.token : undefined
  const tout = tokenOut && 'token' in tokenOut ? tokenOut.token : undefined
  const same = tin && tout ? sameTokenError(tin, tout) : undefined
  if (same) errors.tokenOut = same
  let amountIn = 0n
  if (fields.amountIn !== undefined && tin) {
    const tooPrecise = amountDecimalsError(fields.amountIn, tin)
    if (tooPrecise) errors.amountIn = tooPrecise
    else amountIn = parseUnits(fields.amountIn, tin.decimals)
  }
  if (mode === 'quote' && (fields.quoteId !== undefined || errors.quoteId !== undefined)) errors.quoteId = 'Only POST /swap/execute takes a quoteId.'
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
  return {
    input: fields as SwapInput,
    agent: { ...agent!, wallet: agent!.wallet.toLowerCase() as SwapAgent['wallet'] },
    tokenIn: tin!,
    tokenOut: tout!,
    amountIn,
  }
}
