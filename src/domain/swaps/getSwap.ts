import { NotFoundError } from '../errors.ts'
import type { SwapPorts } from './ports.ts'
import { swapResource, type Swap } from './swapResource.ts'

export type GetSwapDeps = Pick<SwapPorts, 'operations' | 'tokens'>
export type GetSwapInput = { accountId: string; swapId: string }

/** One swap of the account, for polling one that had not ended when execute answered. */
export async function getSwap(deps: GetSwapDeps, input: GetSwapInput): Promise<Swap> {
  const op = await deps.operations.find(input.swapId)
  if (!op || op.accountId !== input.accountId || !op.isSwap) throw new NotFoundError('Swap')
  return swapResource(deps.tokens, op.view, op.params)
}
