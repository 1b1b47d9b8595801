import { parseUnits } from 'viem'
import { ValidationError } from '../errors.ts'
import { assertNotListed } from '../agents/listedAgent.ts'
import { emptyFieldErrors } from '../fieldErrors.ts'
import type { SwapInput, SwapRequest } from './swap.schema.ts'
import type { SwapAgent, SwapPorts, SwapToken } from './ports.ts'
import { amountDecimalsError, sameTokenError } from './swapRules.ts'
import { isPaperAddress } from '../paper/paperAddress.ts'
import { PaperTokenSwapUnsupportedError } from '../paper/errors.ts'
import type { PaperPoolState } from '../paper/paperPool.ts'

/** `paperPool`: the swap trades a paper agent's own paper token against its virtual pool (docs/api.md, "Paper agents"). */
export type ResolvedSwap = { input: SwapInput; agent: SwapAgent; tokenIn: SwapToken; tokenOut: SwapToken; amountIn: bigint; paperPool?: PaperPoolState | undefined }
export type ResolveSwapDeps = Pick<SwapPorts, 'agents' | 'tokens'> & Partial<Pick<SwapPorts, 'paper'>>

/**
 * Checks every field of a swap request against the account, the chain and each other: one 422
 * names them all (with those the parse already refused).
 */
export async function resolveSwap(deps: ResolveSwapDeps, request: SwapRequest, mode: 'quote' | 'execute'): Promise<ResolvedSwap> {
  const { accountId, fields } = request
  const errors = Object.assign(emptyFieldErrors(), request.fieldErrors)
  const paperSide = fields.tokenIn && isPaperAddress(fields.tokenIn) ? 'tokenIn' : fields.tokenOut && isPaperAddress(fields.tokenOut) ? 'tokenOut' : undefined
  const lookup = (field: 'tokenIn' | 'tokenOut') => (fields[field] && field !== paperSide ? deps.tokens.lookup(fields[field]) : undefined)
  const [agent, namedIn, namedOut] = await Promise.all([
    fields.agentId ? deps.agents.forSwap(accountId, fields.agentId) : undefined,
    lookup('tokenIn'),
    lookup('tokenOut'),
  ])
  // A paper token trades only against its own virtual pool, for the paper agent that launched it.
  const paperPool = paperSide && agent?.mode === 'paper' && fields.agentId ? await deps.paper?.pool?.(fields.agentId, fields[paperSide]!.toLowerCase()) : undefined
  if (paperSide && !paperPool) throw new PaperTokenSwapUnsupportedError(paperSide)
  const paperToken = paperPool && { token: { address: paperPool.token as SwapToken['address'], symbol: paperPool.symbol, decimals: 18, verified: false, native: false } }
  const [tokenIn, tokenOut] = paperSide === 'tokenIn' ? [paperToken, namedOut] : paperSide === 'tokenOut' ? [namedIn, paperToken] : [namedIn, namedOut]
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
  const other = paperSide === 'tokenIn' ? tout : tin
  if (paperPool && other && other.symbol !== paperPool.quoteSymbol) {
    const field = paperSide === 'tokenIn' ? 'tokenOut' : 'tokenIn'
    errors[field] = `${paperPool.symbol} trades only against its virtual pool's quote asset, ${paperPool.quoteSymbol}.`
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
  return {
    paperPool,
    input: fields as SwapInput,
    agent: { ...agent!, wallet: agent!.wallet.toLowerCase() as SwapAgent['wallet'] },
    tokenIn: tin!,
    tokenOut: tout!,
    amountIn,
  }
}
