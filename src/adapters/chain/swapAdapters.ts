import { erc20Abi, getAddress, type Address } from 'viem'
import type pg from 'pg'
import type { WalletDeps } from './walletDeps.ts'
import type { SwapMarket, SwapSimulator, SwapTokens } from '../../domain/swaps/ports.ts'
import { formatUsd } from '../../domain/tokens/priceMath.ts'
import { pinToLatestBlock } from './pinnedReads.ts'
import { createPriceReader } from './priceReader.ts'
import { findRoute, priceRoute, reverseRoute } from './swapRoute.ts'
import { approveTx, sellBackCheck, simulateTxs, spenderOf, swapTx } from './swapPlanner.ts'
import { lookupToken } from './tokenInfo.ts'

/**
 * The chain side of the swap ports: token lookup, routes and prices at one block, and the agent
 * wallet's funds and simulation. (Swap operations are actors: src/actors/walletOp/walletOps.ts.)
 *
 * @example
 * const ports = createSwapChainPorts({ pool, wallet })
 */
export function createSwapChainPorts({ pool, wallet }: { pool: pg.Pool; wallet: WalletDeps }) {
  const { chain } = wallet
  const client = chain.publicClient

  const tokens: SwapTokens = {
    lookup: (ref) => lookupToken({ pool, chain }, ref, { verifiedSymbolsOnly: true }),
    weth: chain.manifest.contracts.weth.toLowerCase() as Address,
    usdc: chain.manifest.contracts.usdc.toLowerCase() as Address,
  }

  const market: SwapMarket = {
    async atLatestBlock() {
      // Reads of one block are shared with other quotes of that block.
      const at = await pinToLatestBlock(chain)
      return {
        findRoute: (q) => findRoute(at, q),
        priceRoute: (route, amountIn) => priceRoute(at, route, amountIn),
        async prices() {
          const reader = await createPriceReader(at, at.blockNumber)
          return { usd: (token, amount) => reader.amountUsd(token, amount).then((v) => (v === null ? null : formatUsd(v))) }
        },
        blockTimestamp: () => at.publicClient.getBlock({ blockTag: 'latest' }).then((b) => b.timestamp),
      }
    },
  }

  const simulator: SwapSimulator = {
    async funds(owner, tokenIn) {
      const [eth, token, block] = await Promise.all([
        client.getBalance({ address: owner }),
        tokenIn.native
          ? Promise.resolve(0n)
          : client.readContract({ address: getAddress(tokenIn.address), abi: erc20Abi, functionName: 'balanceOf', args: [owner] }),
        client.getBlock({ blockTag: 'latest' }),
      ])
      return { eth, token, baseFeePerGas: block.baseFeePerGas ?? null }
    },
    async allowance(route, tokenIn, owner) {
      const spender = spenderOf(chain, route, tokenIn.native)
      const allowance = spender
        ? await client.readContract({ address: getAddress(tokenIn.address), abi: erc20Abi, functionName: 'allowance', args: [owner, getAddress(spender)] })
        : 0n
      return { spender, allowance }
    },
    swapTx: (p) => swapTx(chain, p),
    approveTx,
    simulate: (owner, txs) => simulateTxs(chain, owner, txs),
    sellBackWarnings: (p) => sellBackCheck(chain, { ...p, reverse: reverseRoute(p.route) }),
  }

  return { tokens, market, simulator }
}
