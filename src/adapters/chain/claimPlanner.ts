import { encodeFunctionData, getAddress, parseEventLogs } from 'viem'
import { BondingCurveLaunchpadArtifact, FeeLockerArtifact } from '../../dev/artifacts/index.ts'
import type { WalletOpPlanner } from './walletOpPorts.ts'
import type { PlannedTx } from './txSender.ts'
import { formatAmount, formatUsd } from '../../domain/tokens/priceMath.ts'
import { createPriceReader } from './priceReader.ts'
import type { ChainHandle } from './chain.ts'
import { claimParamsSchema } from '../../domain/fees/fees.schema.ts'
import { TOKEN_DECIMALS } from '../../domain/fees/feeRules.ts'

/**
 * Gas for each claim after the first, which cannot be estimated ahead (the sender estimates
 * only the first transaction of a batch). A venue-b claim (two storage writes, two transfers)
 * uses about 90k.
 */
const CLAIM_GAS = 250_000n

export { claimParamsSchema, type ClaimParams } from '../../domain/fees/fees.schema.ts'

const launchpadClaimed = BondingCurveLaunchpadArtifact.abi.filter((x) => x.type === 'event' && x.name === 'CreatorFeesClaimed')
const lockerClaimed = FeeLockerArtifact.abi.filter((x) => x.type === 'event' && x.name === 'CreatorFeesClaimed')

/**
 * The `claim` wallet operation: `claimCreatorFees(token, to)` on venue-a's launchpad or
 * `claim(token, to)` on venue-b's FeeLocker, one transaction per token, from the creator's
 * (the agent's) wallet. Its outcome reads what each transaction actually paid from the
 * contracts' `CreatorFeesClaimed` events.
 */
export const claimPlanner: WalletOpPlanner = {
  plan({ params, chain }) {
    const { claims } = claimParamsSchema.parse(params)
    const { venueA, feeLocker } = chain.manifest.contracts
    return claims.map((c, i): PlannedTx => {
      const token = getAddress(c.tokenAddress)
      const to = getAddress(c.to)
      const data =
        c.venue === 'venue-a'
          ? encodeFunctionData({ abi: BondingCurveLaunchpadArtifact.abi, functionName: 'claimCreatorFees', args: [token, to] })
          : encodeFunctionData({ abi: FeeLockerArtifact.abi, functionName: 'claim', args: [token, to] })
      return { kind: 'claim', to: c.venue === 'venue-a' ? venueA : feeLocker, data, ...(i > 0 ? { gas: CLAIM_GAS } : {}) }
    })
  },

  async outcome({ params, receipts, chain }) {
    const { claims } = claimParamsSchema.parse(params)
    const venueA = chain.manifest.contracts.venueA.toLowerCase()
    const feeLocker = chain.manifest.contracts.feeLocker.toLowerCase()
    const received: ClaimedValue[] = []
    const out = {
      claims: claims.map((c, i) => {
        const receipt = receipts[i]
        let amount = 0n
        let tokenAmount = 0n
        let to = c.to.toLowerCase()
        if (receipt) {
          const logs = receipt.logs.filter((l) => l.address.toLowerCase() === (c.venue === 'venue-a' ? venueA : feeLocker))
          if (c.venue === 'venue-a') {
            for (const e of parseEventLogs({ abi: launchpadClaimed, logs, eventName: 'CreatorFeesClaimed' })) {
              if (e.args.token.toLowerCase() !== c.tokenAddress.toLowerCase()) continue
              amount += e.args.amount
              to = e.args.to.toLowerCase()
            }
          } else {
            for (const e of parseEventLogs({ abi: lockerClaimed, logs, eventName: 'CreatorFeesClaimed' })) {
              if (e.args.token.toLowerCase() !== c.tokenAddress.toLowerCase()) continue
              amount += e.args.quoteAmount
              tokenAmount += e.args.tokenAmount
              to = e.args.to.toLowerCase()
            }
          }
        }
        if (receipt) {
          const quoteAddress = chain.manifest.quoteAssets[c.quote]?.address.toLowerCase()
          if (quoteAddress && amount > 0n) received.push({ token: quoteAddress, amount: amount.toString(), to, block: receipt.blockNumber })
          if (tokenAmount > 0n) received.push({ token: c.tokenAddress.toLowerCase(), amount: tokenAmount.toString(), to, block: receipt.blockNumber })
        }
        return {
          tokenAddress: c.tokenAddress.toLowerCase(),
          symbol: c.symbol,
          venue: c.venue,
          quote: c.quote,
          amount: formatAmount(amount, c.quoteDecimals),
          tokenAmount: formatAmount(tokenAmount, TOKEN_DECIMALS),
          to,
          txHash: receipt?.transactionHash ?? null,
        }
      }),
    }
    return { ...out, claimed: await valued(chain, received) }
  },
}

/** What a claim paid, per token (base units), to whom, valued at its block ("12.34"; null when unpriced there). */
export type ClaimedValue = { token: string; amount: string; to: string; block: bigint; valueUsd?: string | null }

/**
 * The PnL ledger's view of a claim (src/domain/wallet/pnlRules.ts: income at its value): each
 * token paid, valued at the prices of its transaction's block. A price that cannot be read leaves
 * it unvalued (null) rather than failing an operation whose transactions are mined.
 */
async function valued(chain: ChainHandle, paid: ClaimedValue[]) {
  return Promise.all(paid.map(async ({ block, ...p }) => {
    const usd18 = await createPriceReader(chain, block).then((r) => r.amountUsd(getAddress(p.token), BigInt(p.amount))).catch(() => null)
    return { ...p, blockNumber: block.toString(), valueUsd: usd18 === null ? null : formatUsd(usd18) }
  }))
}
