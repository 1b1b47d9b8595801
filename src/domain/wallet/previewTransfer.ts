import { formatEther } from 'viem'
import { InsufficientFundsError } from '../errors.ts'
import type { WalletPorts } from './ports.ts'
import { resolveTransfer, type ResolveTransferDeps, type TransferRequest } from './resolveTransfer.ts'
import { transferCost, usdOrZero } from './walletRules.ts'

export type PreviewTransferDeps = ResolveTransferDeps & Pick<WalletPorts, 'chain'>
export type PreviewTransferInput = TransferRequest

/**
 * What a transfer would do, with nothing recorded or sent: the same checks as `transferFunds`
 * (the same refusal, with the same code, when it would be refused: whitelist, hold, balance,
 * policy), then the amount, its USD value, the agent's 24-hour spend with it, and the network
 * fee at most (gas limit times the fee cap, as the outbox would sign it); refused with
 * `insufficient_funds` when the wallet lacks the ETH for it.
 *
 * @example
 * const p = await previewTransfer(deps, { accountId, agentId, to, token: 'USDC', amount: '25' })
 * p.fee.maxFeeEth // '0.000042'
 */
export async function previewTransfer(deps: PreviewTransferDeps, input: PreviewTransferInput) {
  const t = await resolveTransfer(deps, input)
  const { gasLimit, maxFeePerGas, feeUsd, maxFeeWei } = await feeOf(deps, t)
  return {
    agentId: t.agent.id,
    from: t.agent.walletAddress,
    to: t.params.to,
    toLabel: t.whitelisted.label,
    token: t.token.symbol,
    tokenAddress: t.token.address,
    amount: input.amount,
    valueUsd: t.valueUsd,
    spentTodayUsd: t.spentTodayUsd,
    fee: { gasLimit: gasLimit.toString(), maxFeePerGasWei: maxFeePerGas.toString(), maxFeeEth: formatEther(maxFeeWei), maxFeeUsd: feeUsd },
    sent: false,
  }
}
/** The network fee at most, checked against the wallet's ETH; none for a paper agent (its transfer is simulated: docs/api.md, "Paper agents"). */
async function feeOf(deps: PreviewTransferDeps, t: Awaited<ReturnType<typeof resolveTransfer>>) {
  if (t.agent.mode === 'paper') return { gasLimit: 0n, maxFeePerGas: 0n, maxFeeWei: 0n, feeUsd: '0.00' }
  const { gasLimit, maxFeePerGas, ethBalance } = await deps.chain.transferFee(t.agent.walletAddress, t.params)
  const { maxFeeWei, ethNeeded } = transferCost({ gasLimit, maxFeePerGas, params: t.params })
  if (ethBalance < ethNeeded) throw new InsufficientFundsError({ needed: ethNeeded, balance: ethBalance })
  const eth = await deps.tokens.resolve('ETH')
  const feeUsd = eth ? usdOrZero(await (await deps.chain.prices()).usd(eth, maxFeeWei)) : null
  return { gasLimit, maxFeePerGas, maxFeeWei, feeUsd }
}

export type TransferPreview = Awaited<ReturnType<typeof previewTransfer>>
