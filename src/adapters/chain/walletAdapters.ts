import { getAddress, parseAbiItem, type Address } from 'viem'
import type pg from 'pg'
import type { WalletDeps } from './walletDeps.ts'
import type { PortfolioReads, TransferOperations, TransferParams, WalletChain, WalletToken, WalletTokens } from '../../domain/wallet/ports.ts'
import type { WalletStore } from '../db/wallet.store.ts'
import type { WalletOutcomes } from '../db/walletOutcomes.ts'
import { createPaperStore } from '../db/paper.store.ts'
import { SimulationRevertedError } from '../../domain/errors.ts'
import { chainUnavailableOf, createPriceReader } from './priceReader.ts'
import { balanceOf, resolveToken, tokenUsd } from './tokenInfo.ts'
import { transferTx } from './transferPlanner.ts'
import { currentFeeCaps } from './txSender/signAndStore.ts'
import { revertReason } from './txSender/txErrors.ts'

/** Blocks per `Transfer` log scan. */
const TRANSFER_SCAN_BLOCKS = 10_000n
const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)')

/**
 * The chain side of the wallet ports: token lookup, balances, prices and fees at the latest
 * block, and the portfolio's token discovery (transfer operations are actors: src/actors/walletOp/walletOps.ts)
 * (waited for through its commits, never by reading the actor in a loop).
 *
 * @example
 * const ports = createWalletChainPorts({ pool, wallet, store: { ...createWalletStore(pool), ...createWalletOutcomes(pool, actorReads) } })
 */
export function createWalletChainPorts({ pool, wallet, store }: { pool: pg.Pool; wallet: WalletDeps; store: WalletStore & WalletOutcomes }) {
  const { chain } = wallet
  const client = chain.publicClient

  const paper = createPaperStore(pool)
  const tokens: WalletTokens = { resolve: (ref) => resolveToken({ pool, chain }, ref) }

  const reads: WalletChain = {
    balanceOf: (token, owner) => balanceOf(chain, token, owner),
    async prices(blockNumber) {
      const reader = await createPriceReader(chain, blockNumber)
      return { usd: (token, amount) => tokenUsd(chain, reader, token, amount) }
    },
    async transferFee(owner, params) {
      const tx = transferTx(params)
      const [fees, ethBalance] = await Promise.all([currentFeeCaps(client), client.getBalance({ address: owner })])
      try {
        const estimate = await client.estimateGas({ account: owner, to: tx.to, data: tx.data, value: tx.value ?? 0n })
        // The margin the outbox adds when it signs (txSender/signAndStore.ts).
        return { gasLimit: (estimate * 12n) / 10n, maxFeePerGas: fees.maxFeePerGas, ethBalance }
      } catch (err) {
        const reason = revertReason(err)
        if (reason) throw new SimulationRevertedError(reason, err)
        throw err
      }
    },
  }

  const portfolio: PortfolioReads = {
    async standardTokens() {
      const out: WalletToken[] = []
      for (const ref of ['ETH', 'USDC', ...chain.manifest.stocks.map((s) => s.symbol)]) {
        const t = await resolveToken({ pool, chain }, ref)
        if (t) out.push(t)
      }
      const weth = await resolveToken({ pool, chain }, chain.manifest.contracts.weth)
      if (weth) out.push({ ...weth, symbol: 'WETH', native: false })
      return out
    },
    async otherTokenAddresses(agentId, owner, swappedTo) {
      const known = new Set([...(await store.knownTokenAddresses(agentId, owner)), ...swappedTo])
      return [...known, ...(await receivedTokens(agentId, owner))]
    },
    confirmedSwaps: (agentId) => store.confirmedSwaps(agentId),
    ledgerOps: (agentId) => store.ledgerOps(agentId),
    indexedPrices: (q) => store.indexedPrices({ ...q, weth: chain.manifest.contracts.weth.toLowerCase(), quoteDecimals: Object.entries(chain.manifest.quoteAssets).map(([symbol, a]) => [symbol, a.decimals] as const) }),
    agentIdByWallet: (accountId, wallet) => store.agentIdByWallet(accountId, wallet),
    paperBalances: (agentId) => paper.balances(agentId),
    paperPools: (agentId) => paper.pools(agentId),
    // A contract that merely emits a Transfer to the wallet may not answer balanceOf: not a holding.
    holding: (token, owner, blockNumber) =>
      balanceOf(chain, token, owner, blockNumber).catch((err) => {
        if (token.native || chainUnavailableOf(err)) throw err
        return null
      }),
  }

  /**
   * Tokens the wallet received by plain ERC-20 transfers (an airdrop, another wallet paying it),
   * which neither the indexer nor our own operations know of. Scans `Transfer` logs to the wallet
   * from where the last scan of this agent stopped (the deployment's start block at first) and
   * keeps what it finds; a portfolio then costs one scan of the blocks since its last read.
   */
  async function receivedTokens(agentId: string, owner: Address): Promise<string[]> {
    const scanned = await store.scannedBlock(agentId)
    let from = scanned === undefined ? BigInt(chain.manifest.startBlock) : scanned + 1n
    const head = await client.getBlockNumber({ cacheTime: 0 })
    while (from <= head) {
      const to = from + TRANSFER_SCAN_BLOCKS - 1n < head ? from + TRANSFER_SCAN_BLOCKS - 1n : head
      const logs = await client.getLogs({ event: TRANSFER_EVENT, args: { to: getAddress(owner) }, fromBlock: from, toBlock: to, strict: false })
      // ERC-721 shares the signature with a fourth (indexed tokenId) topic: not a fungible balance.
      const found = new Set(logs.filter((l) => l.topics.length === 3).map((l) => l.address.toLowerCase()))
      await store.recordScan(agentId, to, [...found])
      from = to + 1n
    }
    return store.receivedTokens(agentId)
  }

  return { tokens, chain: reads, portfolio }
}

/**
 * What pricing a transfer takes without moving it (a policy's dry run): the token by symbol or
 * address, and its USD value at the latest block.
 *
 * @example
 * const { tokens, chain } = transferPricing({ pool, wallet })
 */
export function transferPricing({ pool, wallet }: { pool: pg.Pool; wallet: WalletDeps }): { tokens: WalletTokens; chain: Pick<WalletChain, 'prices'> } {
  const { chain } = wallet
  return {
    tokens: { resolve: (ref) => resolveToken({ pool, chain }, ref) },
    chain: {
      async prices(blockNumber) {
        const reader = await createPriceReader(chain, blockNumber)
        return { usd: (token, amount) => tokenUsd(chain, reader, token, amount) }
      },
    },
  }
}
