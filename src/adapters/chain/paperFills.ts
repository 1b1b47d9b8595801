import { formatUnits } from 'viem'
import type { ChainHandle } from './chain.ts'
import { pinToLatestBlock } from './pinnedReads.ts'
import { priceRoute } from './swapRoute.ts'
import { paperToken, type PaperStore, type PaperLeg } from '../db/paper.store.ts'
import type { PaperFiller } from './walletOpPorts.ts'
import type { SwapParams } from '../../domain/swaps/swap.types.ts'
import type { TransferParams } from '../../domain/wallet/ports.ts'
import { isPaperAddress } from '../../domain/paper/paperAddress.ts'


const rejected = (code: string, message: string) => ({ ok: false as const, code, message })

/**
 * The simulated side of a paper agent's wallet operations (docs/api.md, "Paper agents"): a swap
 * is filled at the amount its route quotes against the real pools at the latest block (the
 * pools' fees and the trade's own price impact included, as the router would pay it), refused
 * like a real one when that is below its minimum (`slippage_exceeded`); a transfer moves the
 * amount out of the virtual balance. The fill moves the virtual balances and is recorded once
 * per operation; nothing is signed or sent. Any other operation is refused (`paper_unsupported`).
 */
export function createPaperFiller({ chain, store }: { chain: ChainHandle; store: PaperStore }): PaperFiller {
  async function record(op: { opId: string; agentId: string; kind: string }, debit: PaperLeg, credit: PaperLeg | undefined, result: Record<string, unknown>, symbol: string, decimals: number) {
    const out = await store.recordFill({ ...op, debit, credit, result })
    if (out.ok) return { ok: true as const, result: out.result }
    return rejected('insufficient_funds', `The paper agent holds ${formatUnits(out.held, decimals)} ${symbol}; this needs ${formatUnits(debit.amount, decimals)}.`)
  }

  return {
    isPaper: (agentId) => store.isPaper(agentId),
    filled: (opId) => store.fillOf(opId),
    async fill({ opId, agentId, kind, params }) {
      const known = await store.fillOf(opId)
      if (known) return { ok: true, result: known }
      const at = await pinToLatestBlock(chain)
      const base = { paper: true, txHash: `paper:${opId}`, blockNumber: at.blockNumber.toString(), gasUsed: '0', gasWei: '0', gasUsd: '0.00' }
      if (kind === 'swap') {
        const p = params as unknown as SwapParams
        const amountIn = BigInt(p.amountIn)
        // A paper token's swap: against its virtual pool, whose reserves it moves (docs/api.md, "Paper agents").
        const hop = p.route.hops[0]
        if (p.route.hops.length === 1 && hop && isPaperAddress(hop.address)) {
          const out = await store.fillFromPool({
            opId, agentId, poolToken: hop.address.toLowerCase(), debit: { token: paperToken(p.tokenInInfo), amount: amountIn }, creditToken: paperToken(p.tokenOutInfo),
            minAmountOut: BigInt(p.minAmountOut), result: (amountOut) => ({ ...base, amountOutBaseUnits: amountOut.toString() }),
          })
          if (out.ok) return { ok: true, result: out.result }
          if ('slippage' in out) {
            const min = formatUnits(BigInt(p.minAmountOut), p.tokenOutInfo.decimals)
            return rejected('slippage_exceeded', `The price moved: the virtual pool now pays ${formatUnits(out.slippage, p.tokenOutInfo.decimals)} ${p.tokenOutInfo.symbol}, below the minimum ${min}.`)
          }
          return rejected('insufficient_funds', `The paper agent holds ${formatUnits(out.held, p.tokenInInfo.decimals)} ${p.tokenInInfo.symbol}; this needs ${formatUnits(amountIn, p.tokenInInfo.decimals)}.`)
        }
        const { amountOut } = await priceRoute(at, p.route, amountIn)
        if (amountOut < BigInt(p.minAmountOut)) {
          const min = formatUnits(BigInt(p.minAmountOut), p.tokenOutInfo.decimals)
          return rejected('slippage_exceeded', `The price moved: the pools now pay ${formatUnits(amountOut, p.tokenOutInfo.decimals)} ${p.tokenOutInfo.symbol}, below the minimum ${min}.`)
        }
        const debit = { token: paperToken(p.tokenInInfo), amount: amountIn }
        const credit = { token: paperToken(p.tokenOutInfo), amount: amountOut }
        return record({ opId, agentId, kind }, debit, credit, { ...base, amountOutBaseUnits: amountOut.toString() }, p.tokenInInfo.symbol, p.tokenInInfo.decimals)
      }
      if (kind === 'transfer') {
        const p = params as unknown as TransferParams & { symbol?: string; decimals?: number }
        const debit = { token: paperToken({ address: p.token, native: p.native }), amount: BigInt(p.amount) }
        return record({ opId, agentId, kind }, debit, undefined, base, p.symbol ?? p.token, p.decimals ?? 18)
      }
      return rejected('paper_unsupported', `A paper agent cannot ${kind}: it is not simulated, and nothing a paper agent does reaches the chain.`)
    },
  }
}
