import { z } from 'zod'
import type { AgentsRepository } from '../agents/ports.ts'
import type { LaunchPorts } from '../launches/ports.ts'
import { priceSwap } from '../swaps/priceSwap.ts'
import type { SwapPorts } from '../swaps/ports.ts'
import { resolveSwap } from '../swaps/resolveSwap.ts'
import { tokenAmount, tokenRef } from '../swaps/swap.schema.ts'
import { policyTokens } from '../swaps/swapRules.ts'
import type { WalletPorts } from '../wallet/ports.ts'
import { transferToken } from '../wallet/resolveTransfer.ts'
import { transferAmount, usdOrZero } from '../wallet/walletRules.ts'
import { emptyFieldErrors } from '../fieldErrors.ts'
import { ChainNotConfiguredError } from '../errors.ts'
import { POLICY_INITIATORS } from './ownerPolicy.schema.ts'
import type { PolicyDecisionKind, PolicyScope } from './ownerPolicyRules.ts'
import type { PolicyFacts, PolicyGate } from './ports.ts'

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'A 0x address of 40 hex digits.')

/** The body of POST /policies/simulate: an agent and an operation as its own route would take it. */
export const simulatePolicyBody = z.strictObject({
  agentId: z.uuid('Must be an agent id.'),
  /** Who would start it (default `api_key`, a request with a key). */
  initiator: z.enum(POLICY_INITIATORS).optional(),
  operation: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('swap'), tokenIn: tokenRef, tokenOut: tokenRef, amountIn: tokenAmount }),
    z.strictObject({ kind: z.literal('transfer'), token: tokenRef, amount: tokenAmount, to: address }),
    z.strictObject({ kind: z.literal('launch'), venue: z.enum(['venue-a', 'venue-b', 'self-funded']), quote: tokenRef, seedAmount: tokenAmount.optional() }),
    z.strictObject({ kind: z.literal('fee_claim') }),
  ], { error: (issue) => (issue.code === 'invalid_union' ? 'Unknown operation kind: one of swap, transfer, launch, fee_claim.' : undefined) }),
})
export type SimulatePolicyBody = z.infer<typeof simulatePolicyBody>

export type SimulatePolicyDeps = {
  policies: PolicyGate
  agents: Pick<AgentsRepository, 'assertOwned'>
  /** Absent without a chain: a swap, a transfer or a self-funded launch cannot be priced (503). */
  swaps?: Pick<SwapPorts, 'agents' | 'tokens' | 'market' | 'simulator' | 'paper'> | undefined
  wallet?: { tokens: WalletPorts['tokens']; chain: Pick<WalletPorts['chain'], 'prices'> } | undefined
  launches?: Pick<LaunchPorts, 'prices'> | undefined
}

export type PolicySimulation = {
  decision: PolicyDecisionKind
  rule: { name: string; scope: PolicyScope } | null
  matched: Array<{ rule: string; scope: PolicyScope; action: string; reason: string }>
  /** What the policies were shown: the operation's kind, tokens, destination, USD value and price impact. */
  operation: PolicyFacts
}

const need = <T>(port: T | undefined): T => {
  if (!port) throw new ChainNotConfiguredError()
  return port
}

/** The facts of the operation as its use case would price it; nothing is reserved, saved or sent. */
async function factsOf(deps: SimulatePolicyDeps, accountId: string, body: SimulatePolicyBody): Promise<PolicyFacts> {
  const op = body.operation
  if (op.kind === 'swap') {
    const swaps = need(deps.swaps)
    const fields = { agentId: body.agentId, tokenIn: op.tokenIn, tokenOut: op.tokenOut, amountIn: op.amountIn, slippageBps: 100 }
    const p = await resolveSwap(swaps, { accountId, fields, fieldErrors: emptyFieldErrors() }, 'quote')
    const { priced, valueInUsd } = await priceSwap(swaps, p, undefined)
    const [tokenIn, tokenOut] = policyTokens(p)
    return { kind: 'swap', tokensIn: [tokenIn!], tokensOut: [tokenOut!], usdValue: valueInUsd, priceImpactBps: priced.priceImpactBps }
  }
  await deps.agents.assertOwned(accountId, body.agentId)
  if (op.kind === 'transfer') {
    const wallet = need(deps.wallet)
    const token = await transferToken(wallet, op.token)
    const usdValue = usdOrZero(await (await wallet.chain.prices()).usd(token, transferAmount(op.amount, token)))
    return { kind: 'transfer', tokensIn: [token], tokensOut: [], destination: op.to.toLowerCase(), usdValue }
  }
  if (op.kind === 'launch') {
    if (op.venue !== 'self-funded') return { kind: 'launch', tokensIn: [], tokensOut: [], usdValue: '0.00' }
    const prices = need(deps.launches).prices
    const input = { launchId: '', accountId, agentId: body.agentId, venue: op.venue, symbol: '', name: '', description: null, logoUrl: null, quote: op.quote, seedAmount: op.seedAmount ?? null }
    const [quote, seedUsd] = await Promise.all([prices.quoteToken(op.quote), prices.seedUsd(input)])
    return { kind: 'launch', tokensIn: [quote ?? { symbol: op.quote }], tokensOut: [], usdValue: seedUsd ?? '0.00' }
  }
  return { kind: 'fee_claim', tokensIn: [], tokensOut: [], usdValue: '0' }
}

/**
 * A dry run of the owners' policies: the operation priced as its route would price it, then the
 * account's and the agent's policies evaluated with every matching rule and why (the net USD of
 * each window read as the real evaluation reads it). Nothing is reserved, saved or sent; the
 * guardrails are not checked (`guardrails`: no rule matched, they would decide).
 *
 * @example
 * await simulatePolicy(deps, { accountId, body: { agentId, operation: { kind: 'swap', tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.5' } } })
 * // { decision: 'reject', rule: { name: 'no nights', scope: 'account' }, matched: [...], operation: {...} }
 */
export async function simulatePolicy(deps: SimulatePolicyDeps, { accountId, body }: { accountId: string; body: SimulatePolicyBody }): Promise<PolicySimulation> {
  const facts = await factsOf(deps, accountId, body)
  const d = await deps.policies.decide({ accountId, agentId: body.agentId, opId: '', initiator: body.initiator ?? 'api_key', facts }, undefined, { all: true })
  return { decision: d.decision, rule: d.rule, matched: d.matched, operation: facts }
}
