import { swapInput, readSwapRequest } from '../domain/swaps/swap.schema.ts'
import { stableUuid } from '../domain/util/stableUuid.ts'
import { defineTool, startedChild, type ToolCall } from './tool.ts'

const swapArgs = swapInput.omit({ agentId: true })

const requestOf = ({ accountId, agentId }: ToolCall, args: object) => readSwapRequest(accountId, { ...args, agentId })

export const swapQuoteTool = defineTool({
  name: 'swap_quote',
  description:
    'Quote a swap from the agent wallet without sending anything: the expected amount out, the minimum after slippage, ' +
    'the route, the USD values and the price impact. Tokens are symbols of verified tokens (ETH, USDC, TSLAx) or 0x ' +
    'addresses; amountIn is a decimal string in units of tokenIn. Pass the returned quoteId to swap_execute to trade at it.',
  args: swapArgs,
  scope: 'trade',
  movesFunds: false,
  run: (call, args) => call.core.quoteSwap(requestOf(call, args)),
})

export const swapExecuteTool = defineTool({
  name: 'swap_execute',
  description:
    'Execute a swap from the agent wallet on chain, within the agent policy (per-trade and daily USD caps, price impact, ' +
    'token lists). Answers the swap with its status and tx hash. Unverified tokens (named by address) need ' +
    'acknowledgeUnverified: true. Prefer passing a quoteId from swap_quote.',
  args: swapArgs,
  scope: 'trade',
  movesFunds: true,
  // The operation id comes from the call id: a retried tool call finds its swap and sends nothing new.
  // Called for a chat turn or a run, the swap is its child: the turn hears the outcome when the chain has it.
  run: async (call, args) =>
    startedChild(call, await call.core.executeSwap({ ...requestOf(call, args), operationId: stableUuid(call.accountId, 'tool/swap_execute', call.callId), parentId: call.parent?.actorId })),
  preview: (call, args) => call.core.quoteSwap(requestOf(call, { ...args, quoteId: undefined })),
})
