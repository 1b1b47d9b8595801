import { assertNotListed } from '../agents/listedAgent.ts'
import { formatUnits } from 'viem'
import { AgentDeletedError, InsufficientFundsError, ValidationError } from '../errors.ts'
import { checkPolicy } from '../agents/policyCheck.ts'
import type { AgentRecord, WhitelistEntry } from '../agents/ports.ts'
import type { TransferParams, WalletPorts, WalletToken } from './ports.ts'
import type { TransferInput } from './wallet.schema.ts'
import { checkOwnerPolicies, guardrailCheck } from '../policies/policyGate.ts'
import type { PolicyFacts } from '../policies/ports.ts'
import type { PolicyDecision } from '../policies/ownerPolicyRules.ts'
import { checkWhitelisted, transferAmount, transferParamsOf, usdOrZero } from './walletRules.ts'

export type ResolveTransferDeps = Pick<WalletPorts, 'agents' | 'tokens' | 'chain' | 'operations' | 'clock'> & Partial<Pick<WalletPorts, 'policies'>> & { portfolio?: Pick<WalletPorts['portfolio'], 'paperBalances'> }
export type TransferRequest = TransferInput & { accountId: string }

/** A transfer that passed every check before anything is recorded: what it moves, its USD value and its policy check. */
export type ResolvedTransfer = {
  agent: AgentRecord
  token: WalletToken
  amount: bigint
  params: TransferParams
  whitelisted: WhitelistEntry
  valueUsd: string
  spentTodayUsd: string
  /** The policy check with a given 24-hour spend (made again under the agent's lock when the transfer is recorded). */
  checkSpend(spentTodayUsd: string, decision?: PolicyDecision): void
  /** The owners' policies' decision (not a reject: that throws), and the facts it was made on. */
  decision: PolicyDecision
  facts: PolicyFacts
}

/** The agent's token (any token by symbol or address); a field error when unknown. */
export async function transferToken(deps: Pick<WalletPorts, 'tokens'>, ref: string): Promise<WalletToken> {
  const token = await deps.tokens.resolve(ref)
  if (!token) throw new ValidationError({ token: 'Unknown token; a symbol such as ETH, USDC, TSLAx or a token address.' })
  return token
}

/**
 * Every check a transfer makes before it is recorded, in order: the agent (404 for another
 * account's, 409 when deleted), the token and amount (422), the whitelist and its hold (403), the
 * balance (422 `insufficient_funds`), then the policy with its USD value (403 `policy_violation`).
 */
export async function resolveTransfer(deps: ResolveTransferDeps, input: TransferRequest & { operationId?: string; parentId?: string | undefined }, agent?: AgentRecord): Promise<ResolvedTransfer> {
  agent ??= await deps.agents.getOwned(input.accountId, input.agentId)
  if (agent.status === 'deleted') throw new AgentDeletedError()
  assertNotListed(agent, 'transfer')
  const token = await transferToken(deps, input.token)
  const amount = transferAmount(input.amount, token)
  const whitelisted = checkWhitelisted(await deps.agents.whitelist(agent.id), input.to, deps.clock.now())
  // A paper agent's transfer moves its virtual balance (docs/api.md, "Paper agents").
  const held = agent.mode === 'paper'
    ? ((await deps.portfolio?.paperBalances?.(agent.id))?.get(token.native ? 'eth' : token.address.toLowerCase()) ?? 0n)
    : await deps.chain.balanceOf(token, agent.walletAddress)
  if (held < amount) throw new InsufficientFundsError({ message: `The agent holds ${formatUnits(held, token.decimals)} ${token.symbol}.` })
  const valueUsd = usdOrZero(await (await deps.chain.prices()).usd(token, amount))
  // The owners' policies first (a reject is a 422 naming the rule); an accept skips the guardrails but for the kill switch.
  const facts: PolicyFacts = { kind: 'transfer', tokensIn: [token], tokensOut: [], destination: input.to, usdValue: valueUsd }
  const decision = await checkOwnerPolicies(deps.policies, { accountId: input.accountId, agentId: agent.id, opId: input.operationId ?? '', parentId: input.parentId, facts })
  const checkSpend = guardrailCheck(decision, agent.policy, (spentTodayUsd: string) => checkPolicy(agent.policy, { tokens: [token], usdValue: valueUsd, spentTodayUsd }))
  const spentTodayUsd = await deps.operations.spentTodayUsd(agent.id, input.operationId)
  checkSpend(spentTodayUsd)
  return { agent, token, amount, params: transferParamsOf(token, amount, input.to), whitelisted, valueUsd, spentTodayUsd, checkSpend, decision, facts }
}
