import { getAddress } from 'viem'
import type { SwapParams } from './swap.types.ts'
import { checkPolicy } from '../agents/policyCheck.ts'
import { IdempotencyKeyReusedError, InsufficientFundsError, NotFoundError, SimulationRevertedError } from '../errors.ts'
import { QuoteMismatchError, SlippageExceededError } from './errors.ts'
import type { SwapOperation, SwapPorts, WalletOpView } from './ports.ts'
import type { SwapRequest } from './swap.schema.ts'
import { resolveSwap, type ResolvedSwap } from './resolveSwap.ts'
import { priceSwap } from './priceSwap.ts'
import {
  approvalNeeded, bareRoute, ethNeeded, gasLimitFrom, isSlippageRevert, maxFeePerGasOf, minAmountOut, operationMatches,
  policyTokens, preChainRefusal, quoteMatches, requireAcknowledged,
} from './swapRules.ts'
import { fmt, swapResource, type Swap } from './swapResource.ts'
import { approvalUnder, checkOwnerPolicies, guardrailCheck, policyStamp } from '../policies/policyGate.ts'
import type { PolicyFacts } from '../policies/ports.ts'

export type ExecuteSwapDeps = Pick<SwapPorts, 'agents' | 'tokens' | 'market' | 'simulator' | 'quotes' | 'operations'> & Partial<Pick<SwapPorts, 'clock' | 'paper' | 'policies'>>
/**
 * The request, and the operation id (the Idempotency-Key's resource id: a retry finds its swap);
 * `parentId`: the actor the swap is made for (a chat turn, a run), which hears its end as its child.
 */
export type ExecuteSwapInput = SwapRequest & { operationId: string; parentId?: string | undefined }

/**
 * Executes a swap from an agent wallet as a durable `swap` wallet operation, after the request's
 * checks, the unverified-token acknowledgement, the agent's policy, a balance check and a
 * simulation of every transaction of the plan. Answers when the operation ended, or with its
 * pending state after the wait (at once for a parent's child); a refusal before anything is
 * signed is thrown (422).
 *
 * @example
 * const swap = await executeSwap(deps, { ...readSwapRequest(accountId, body), operationId: randomUUID() })
 */
export async function executeSwap(deps: ExecuteSwapDeps, input: ExecuteSwapInput): Promise<Swap> {
  const p = await resolveSwap(deps, input, 'execute')
  const ask = { agentId: p.input.agentId, tokenIn: p.tokenIn, tokenOut: p.tokenOut, amountIn: p.amountIn, slippageBps: p.input.slippageBps }
  // A retry of a request that already created its operation (same Idempotency-Key) waits for that one.
  const existing = await ownSwap(deps, input.accountId, input.operationId)
  if (existing) {
    // Only the same request may be answered with it (its first answer may have been lost).
    if (!operationMatches(existing, ask)) throw new IdempotencyKeyReusedError()
    const view = await deps.operations.waitEnd(input.operationId, input.parentId ? 0 : undefined)
    if (!view) throw new NotFoundError('Swap')
    return answer(deps, view, existing.params)
  }
  const quoteId = p.input.quoteId
  const stored = quoteId ? await deps.quotes.load({ accountId: input.accountId, quoteId, opId: input.operationId }) : undefined
  if (stored && !quoteMatches(stored, ask)) throw new QuoteMismatchError()
  requireAcknowledged([p.tokenIn, p.tokenOut], p.input.acknowledgeUnverified)
  const { priced, valueInUsd, valueOutUsd, deadline, warnings } = await priceSwap(deps, p, stored?.route)
  const minOut = stored?.minAmountOut ?? minAmountOut(priced.amountOut, p.input.slippageBps)
  // The owners' policies first (a reject is a 422 naming the rule); an accept skips the guardrails but for the kill switch.
  const [tokenIn, tokenOut] = policyTokens(p)
  const facts: PolicyFacts = { kind: 'swap', tokensIn: [tokenIn!], tokensOut: [tokenOut!], usdValue: valueInUsd, priceImpactBps: priced.priceImpactBps }
  const decision = await checkOwnerPolicies(deps.policies, { accountId: input.accountId, agentId: p.input.agentId, opId: input.operationId, parentId: input.parentId, facts })
  const checkSpend = guardrailCheck(decision, p.agent.policy, (spentTodayUsd: string) =>
    checkPolicy(p.agent.policy, { tokens: policyTokens(p), usdValue: valueInUsd, priceImpactBps: priced.priceImpactBps, spentTodayUsd }))
  checkSpend(await deps.operations.spentTodayUsd(p.input.agentId, input.operationId))

  // A paper agent's swap is filled from its virtual ledger: checked against that, nothing planned for the chain.
  const plan = p.agent.mode === 'paper' ? await checkPaperFunds(deps, p) : await planSwapTxs(deps, p, { route: priced, minOut, deadline })
  const params: SwapParams = {
    tokenIn: p.tokenIn.address,
    tokenOut: p.tokenOut.address,
    tokenInInfo: p.tokenIn,
    tokenOutInfo: p.tokenOut,
    amountIn: p.amountIn.toString(),
    minAmountOut: minOut.toString(),
    expectedAmountOut: priced.amountOut.toString(),
    slippageBps: p.input.slippageBps,
    route: bareRoute(priced),
    approve: plan.approve,
    swapGas: plan.approve ? plan.gases[1]!.toString() : null,
    deadline: deadline.toString(),
    valueInUsd,
    valueOutUsd,
    priceImpactBps: priced.priceImpactBps,
    quoteId: quoteId ?? null,
    warnings,
  }
  const view = await deps.operations.start({
    opId: input.operationId,
    accountId: input.accountId,
    agentId: p.input.agentId,
    params,
    usdValue: valueInUsd,
    checkSpend,
    consumeQuoteId: quoteId,
    parentId: input.parentId,
    // Above the policy's approval threshold it waits for an owner (202 `awaiting_approval`); simulated already, nothing signed.
    approval: approvalUnder(decision, p.agent.policy, { opId: input.operationId, usdValue: valueInUsd, now: deps.clock?.now() ?? Date.now() }),
    policy: policyStamp(decision, facts),
  })
  return answer(deps, view, params)
}

/** The account's swap with this operation id, if one was created; another kind or account's is not found. */
async function ownSwap(deps: Pick<SwapPorts, 'operations'>, accountId: string, opId: string): Promise<SwapOperation | undefined> {
  const op = await deps.operations.find(opId)
  if (op && (op.accountId !== accountId || !op.isSwap)) throw new NotFoundError('Swap')
  return op
}

/**
 * The transactions of the swap (an approval first when the allowance is short), simulated in
 * order; refused when the wallet lacks the amount, the ETH for gas, or the price moved past the
 * minimum.
 */
async function planSwapTxs(
  deps: Pick<SwapPorts, 'simulator'>,
  p: ResolvedSwap,
  { route, minOut, deadline }: { route: Parameters<SwapPorts['simulator']['swapTx']>[0]['route']; minOut: bigint; deadline: bigint },
) {
  const sim = deps.simulator
  const owner = getAddress(p.agent.wallet)
  const funds = await sim.funds(owner, p.tokenIn)
  const held = p.tokenIn.native ? funds.eth : funds.token
  if (held < p.amountIn) {
    const message = `The agent wallet holds ${fmt(held, p.tokenIn.decimals)} ${p.tokenIn.symbol}; this swap needs ${fmt(p.amountIn, p.tokenIn.decimals)}.`
    throw new InsufficientFundsError({ message })
  }
  const { spender, allowance } = await sim.allowance(route, p.tokenIn, owner)
  const approve = approvalNeeded(spender, allowance, p.amountIn)
  const swap = sim.swapTx({ route, nativeIn: p.tokenIn.native, nativeOut: p.tokenOut.native, amountIn: p.amountIn, minAmountOut: minOut, recipient: owner, deadline })
  const txs = approve ? [sim.approveTx(p.tokenIn.address, approve), swap] : [swap]
  // Every transaction in order, as the chain would run them: the swap sees the approval.
  const simulated = await sim.simulate(owner, txs)
  const failed = simulated.find((c) => !c.ok)
  if (failed && isSlippageRevert(failed.reason)) {
    throw new SlippageExceededError({ minAmountOut: fmt(minOut, p.tokenOut.decimals), symbol: p.tokenOut.symbol })
  }
  if (failed) throw new SimulationRevertedError(failed.reason ?? 'reverted')
  const gases = simulated.map((c) => gasLimitFrom(c.gasUsed))
  const needed = ethNeeded(gases, maxFeePerGasOf(funds.baseFeePerGas), swap.value ?? 0n)
  if (funds.eth < needed) throw new InsufficientFundsError({ needed, balance: funds.eth })
  return { approve, gases }
}

/** A paper agent's swap: its virtual balance must hold the amount (refused like a real one, `insufficient_funds`). */
async function checkPaperFunds(deps: Partial<Pick<SwapPorts, 'paper'>>, p: ResolvedSwap) {
  const held = (await deps.paper?.balanceOf(p.input.agentId, p.tokenIn)) ?? 0n
  if (held < p.amountIn) {
    const message = `The paper agent holds ${fmt(held, p.tokenIn.decimals)} ${p.tokenIn.symbol}; this swap needs ${fmt(p.amountIn, p.tokenIn.decimals)}.`
    throw new InsufficientFundsError({ message })
  }
  return { approve: null, gases: [] as bigint[] }
}

/** The swap as it stands; one that failed before anything was signed is a refusal. */
function answer(deps: Pick<SwapPorts, 'tokens'>, view: WalletOpView, params: SwapParams): Swap {
  const refusal = preChainRefusal(view.error, view.status === 'failed')
  if (refusal) throw refusal
  return swapResource(deps.tokens, view, params)
}
