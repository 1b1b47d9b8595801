import { mapLimit } from '../domain/util/mapLimit.ts'
import { isAlreadyKnown } from './txSender.ts'
import type pg from 'pg'
import {
  BlockNotFoundError,
  erc20Abi,
  getAbiItem,
  getAddress,
  getContractAddress,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem'
import type { Logger } from '../logger.ts'
import type { ChainHandle } from './chain.ts'
import {
  AmmFactoryArtifact,
  AmmPairArtifact,
  BondingCurveLaunchpadArtifact,
  FeeLockerArtifact,
  InstantPoolLauncherArtifact,
  SelfFundedTokenArtifact,
} from './artifacts/index.ts'
import { priceFromReserves } from './prices.ts'
import { withTransaction } from '../db/transaction.ts'

/*
 * The chain indexer. It follows, from the manifest's start block (or its checkpoint):
 *   venue-a (BondingCurveLaunchpad): TokenCreated, Trade, Graduated, CreatorFeesClaimed
 *   venue-b (InstantPoolLauncher):   PoolLaunched
 *   FeeLocker:                       FeesAccrued, CreatorFeesClaimed
 *   SelfFundedToken (any address):   SelfFundedLaunch
 *   AMM pools of launched tokens:    Swap, Sync
 * and writes tokens, trades, market snapshots, creator fee events, the recent block hashes and
 * the checkpoint in one database transaction per block range.
 *
 * Reorgs: before each pass the newest stored block hash is compared with the chain; on a
 * mismatch the stored hashes are walked down to the common ancestor, and everything indexed
 * above it is deleted (a token from our own launch keeps its row, with its indexed fields
 * reset), the checkpoint moves back, and outbox transactions mined in a removed block go back to
 * `broadcast` and their stored signed bytes are sent again (never re-signed). They are marked
 * confirmed again once a receipt shows up.
 */

const launchpadEvents = [
  getAbiItem({ abi: BondingCurveLaunchpadArtifact.abi, name: 'TokenCreated' }),
  getAbiItem({ abi: BondingCurveLaunchpadArtifact.abi, name: 'Trade' }),
  getAbiItem({ abi: BondingCurveLaunchpadArtifact.abi, name: 'Graduated' }),
  getAbiItem({ abi: BondingCurveLaunchpadArtifact.abi, name: 'CreatorFeesClaimed' }),
] as const
const launcherEvents = [getAbiItem({ abi: InstantPoolLauncherArtifact.abi, name: 'PoolLaunched' })] as const
const lockerEvents = [
  getAbiItem({ abi: FeeLockerArtifact.abi, name: 'FeesAccrued' }),
  getAbiItem({ abi: FeeLockerArtifact.abi, name: 'CreatorFeesClaimed' }),
] as const
const selfFundedEvent = getAbiItem({ abi: SelfFundedTokenArtifact.abi, name: 'SelfFundedLaunch' })
const poolEvents = [getAbiItem({ abi: AmmPairArtifact.abi, name: 'Swap' }), getAbiItem({ abi: AmmPairArtifact.abi, name: 'Sync' })] as const

/** Pool addresses per getLogs call. */
const POOL_CHUNK = 500
/** Outbox rows a reorg put back that still cannot be sent this long after are marked failed. */
const GIVE_UP_SECONDS = 600
/** Parallel RPC reads. */
const RPC_PARALLEL = 16

export type IndexerOptions = {
  pool: pg.Pool
  chain: ChainHandle
  logger: Logger
  /** Blocks behind the head that are indexed; default 0 (the embedded chain mines on demand). */
  confirmations?: number
  /** Pause between passes; default 1000 ms. */
  pollMs?: number
  /** Recent block hashes kept to find a common ancestor; default 64. */
  reorgDepth?: number
  /** Blocks per range (one getLogs + one database transaction); default 2000. */
  maxRange?: number
}

export type SyncResult = {
  /** Checkpoint after the pass. */
  checkpoint: number
  head: number
  /** Common ancestor when a reorg was undone in this pass. */
  reorgedTo: number | null
  /** Outbox transactions re-broadcast in this pass. */
  rebroadcast: number
}

export type Indexer = ReturnType<typeof createIndexer>

/** A range was fetched from a chain that changed under it; the caller checks for a reorg again. */
class RangeReorgedError extends Error {
  override name = 'RangeReorgedError'
}

/** Another indexer (another node) wrote this range first; the pass goes on from its checkpoint. */
class CheckpointMovedError extends Error {
  override name = 'CheckpointMovedError'
}

type Header = { number: number; hash: Hex; parentHash: Hex; timestamp: bigint }

type TokenInfo = {
  address: string
  venue: 'venue-a' | 'venue-b' | 'self-funded'
  quoteAddress: string
  /** Pool whose Swap/Sync events belong to this token. */
  pool: string | null
  tokenIsToken0: boolean | null
  virtualToken: bigint
  virtualQuote: bigint
}

type NewToken = {
  address: string
  venue: 'venue-a' | 'venue-b' | 'self-funded'
  symbol: string
  name: string
  quoteAddress: string
  quoteSymbol: string
  creator: string
  totalSupply: bigint
  poolAddress: string | null
  verified: boolean
  blockNumber: number
  txHash: string
  curveVirtualQuote: bigint | null
  graduationThreshold: bigint | null
  poolTokenIsToken0: boolean | null
  poolVirtualToken: bigint | null
  poolVirtualQuote: bigint | null
}

type TradeRow = {
  txHash: string
  logIndex: number
  token: string
  venue: string
  source: 'curve' | 'pool'
  trader: string
  side: 'buy' | 'sell'
  quoteAmount: bigint
  tokenAmount: bigint
  creatorFee: bigint
  platformFee: bigint
  feeAsset: 'quote' | 'token'
  priceAfter: bigint | null
  blockNumber: number
}

type SnapshotRow = { token: string; blockNumber: number; logIndex: number; source: 'curve' | 'pool'; tokenReserve: bigint; quoteReserve: bigint; price: bigint }
type FeeRow = { txHash: string; logIndex: number; token: string; kind: 'earned' | 'claimed'; quote: bigint; tokenAmount: bigint; blockNumber: number }

const lower = (a: string) => a.toLowerCase()


/**
 * Creates the indexer. `start()` runs a pass at once (reconciling a chain that came back behind
 * or reorged while we were down), then one every `pollMs`; `syncOnce()` runs one pass now
 * (serialised with the loop) and indexes up to the head.
 *
 * @example
 * const indexer = createIndexer({ pool, chain, logger })
 * indexer.start()
 * await indexer.syncOnce()
 * await indexer.stop()
 */
export function createIndexer(opts: IndexerOptions) {
  const { pool, chain, logger } = opts
  const confirmations = opts.confirmations ?? 0
  const pollMs = opts.pollMs ?? 1000
  const reorgDepth = Math.max(2, opts.reorgDepth ?? 64)
  const maxRange = Math.max(1, opts.maxRange ?? 2000)
  const client: PublicClient = chain.publicClient
  const chainId = chain.chainId
  const { contracts } = chain.manifest
  const startBlock = chain.manifest.startBlock
  const venueA = lower(contracts.venueA)
  const venueB = lower(contracts.venueB)
  const feeLocker = lower(contracts.feeLocker)
  const quoteSymbols = new Map(Object.entries(chain.manifest.quoteAssets).map(([symbol, q]) => [lower(q.address), symbol]))
  const log = logger.child({ component: 'indexer' })

  let tail: Promise<unknown> = Promise.resolve()
  let timer: NodeJS.Timeout | undefined
  let stopped = true
  let failures = 0

  function serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = tail.then(fn, fn)
    tail = next.catch(() => {})
    return next
  }

  const tx = <T,>(fn: (db: pg.PoolClient) => Promise<T>): Promise<T> => withTransaction(pool, fn)

  /** Hash of block `n` on the chain now, or null when there is no such block. */
  async function chainHash(n: number): Promise<Hex | null> {
    try {
      const b = await client.getBlock({ blockNumber: BigInt(n) })
      return b.hash
    } catch (err) {
      if (err instanceof BlockNotFoundError) return null
      throw err
    }
  }

  async function header(n: number): Promise<Header> {
    const b = await client.getBlock({ blockNumber: BigInt(n) })
    return { number: Number(b.number), hash: b.hash, parentHash: b.parentHash, timestamp: b.timestamp }
  }

  async function checkpoint(): Promise<number> {
    await pool.query(`insert into chain_checkpoint (chain_id, block_number) values ($1, $2) on conflict do nothing`, [chainId, startBlock - 1])
    const { rows } = await pool.query<{ block_number: string }>(`select block_number from chain_checkpoint where chain_id = $1`, [chainId])
    return Number(rows[0]!.block_number)
  }

  // ---------------------------------------------------------------- reorgs

  type Rebroadcast = { id: string; raw: Hex; hash: string; from_address: string; nonce: string }

  /** Puts outbox rows mined in removed blocks back to `broadcast`; returns them for re-broadcast. */
  async function resetOutbox(db: pg.PoolClient, where: string, params: unknown[]): Promise<Rebroadcast[]> {
    const { rows } = await db.query<Rebroadcast>(
      `update chain_tx set status = 'broadcast', block_number = null, block_hash = null, gas_used = null, contract_address = null,
              error = null, reorged_at = now(), reorg_count = reorg_count + 1, updated_at = now()
        where chain_id = $1 and status in ('confirmed', 'failed') and (${where})
        returning id, raw, hash, from_address, nonce`,
      [chainId, ...params],
    )
    return rows
  }

  async function rebroadcast(rows: Rebroadcast[]): Promise<number> {
    const sorted = [...rows].sort((a, b) => (a.from_address === b.from_address ? Number(a.nonce) - Number(b.nonce) : a.from_address < b.from_address ? -1 : 1))
    let sent = 0
    for (const row of sorted) {
      try {
        await client.sendRawTransaction({ serializedTransaction: row.raw })
        sent++
      } catch (err) {
        if (!isAlreadyKnown(err)) log.warn({ err: String(err), id: row.id }, 're-broadcast after a reorg failed; retried on the next pass')
      }
    }
    if (rows.length) log.warn({ transactions: rows.map((r) => r.hash) }, 'outbox transactions mined in removed blocks were re-broadcast')
    return rows.length
  }

  /**
   * Deletes everything indexed above `ancestor` and moves the checkpoint back to it (never below
   * the start block: with no common ancestor, everything goes and indexing restarts there).
   */
  async function rewind(ancestor: number, removedTxBlocks: string[]): Promise<Rebroadcast[]> {
    return tx(async (db) => {
      await db.query(`select block_number from chain_checkpoint where chain_id = $1 for update`, [chainId])
      await db.query(`delete from trade where chain_id = $1 and block_number > $2`, [chainId, ancestor])
      await db.query(`delete from token_snapshot where chain_id = $1 and block_number > $2`, [chainId, ancestor])
      await db.query(`delete from creator_fee_event where chain_id = $1 and block_number > $2`, [chainId, ancestor])
      await db.query(
        `update token set graduated = false, graduated_block = null,
                pool_address = case when venue = 'venue-a' then null else pool_address end
          where chain_id = $1 and graduated_block > $2`,
        [chainId, ancestor],
      )
      // Tokens created above the ancestor: gone, unless our own launch confirmed them (the
      // launch keeps its row and metadata; the indexer fills the rest in again when it sees it).
      await db.query(`delete from token where chain_id = $1 and block_number > $2 and launch_id is null`, [chainId, ancestor])
      await db.query(
        `update token set indexed_block = null, graduated = false, graduated_block = null,
                curve_virtual_quote = null, graduation_threshold = null,
                pool_address = case when venue = 'venue-a' then null else pool_address end
          where chain_id = $1 and launch_id is not null and (block_number > $2 or indexed_block > $2)`,
        [chainId, ancestor],
      )
      await db.query(`delete from chain_block where chain_id = $1 and number > $2`, [chainId, ancestor])
      await db.query(`update chain_checkpoint set block_number = least(block_number, $2) where chain_id = $1`, [chainId, Math.max(ancestor, startBlock - 1)])
      return resetOutbox(db, 'block_hash = any($2)', [removedTxBlocks])
    })
  }

  /**
   * Compares the newest stored block hash with the chain; on a mismatch walks the stored hashes
   * down to the common ancestor and rewinds to it. Returns the ancestor, or null when in step.
   */
  async function reconcile(): Promise<{ ancestor: number; rows: Rebroadcast[] } | null> {
    const { rows: stored } = await pool.query<{ number: string; hash: string }>(
      `select number, hash from chain_block where chain_id = $1 order by number desc`,
      [chainId],
    )
    if (stored.length === 0) return null
    if ((await chainHash(Number(stored[0]!.number))) === stored[0]!.hash) return null
    let ancestor: number | undefined
    for (const s of stored.slice(1)) {
      if ((await chainHash(Number(s.number))) === s.hash) {
        ancestor = Number(s.number)
        break
      }
    }
    if (ancestor === undefined) {
      ancestor = -1
      log.error({ deepest: Number(stored.at(-1)!.number) }, 'reorg deeper than the stored block hashes: reindexing from the start block')
    }
    log.warn({ ancestor, was: Number(stored[0]!.number) }, 'chain reorganised: rewinding the index to the common ancestor')
    return { ancestor, rows: await rewind(ancestor, await removedOutboxBlocks(ancestor)) }
  }

  /**
   * Hashes of the blocks above `above` in which outbox transactions were recorded as mined and
   * that the chain no longer has (no block at that height, or another one). Checked block by
   * block, so a deep reorg or a chain restored from an older state re-sends exactly those.
   */
  async function removedOutboxBlocks(above: number): Promise<string[]> {
    const { rows } = await pool.query<{ block_number: string; block_hash: string }>(
      `select distinct block_number, block_hash from chain_tx
        where chain_id = $1 and status in ('confirmed', 'failed') and block_number > $2`,
      [chainId, above],
    )
    const gone: string[] = []
    for (const r of rows) if ((await chainHash(Number(r.block_number))) !== r.block_hash) gone.push(r.block_hash)
    return gone
  }

  /**
   * Outbox rows mined above the checkpoint are not covered by the stored hashes: each one's block
   * is checked on the chain directly (gone, or another hash = removed by a reorg).
   */
  async function verifyUnindexedOutbox(cp: number): Promise<Rebroadcast[]> {
    const gone = await removedOutboxBlocks(cp)
    if (gone.length === 0) return []
    log.warn({ blocks: gone }, 'outbox transactions were mined in blocks the chain no longer has')
    return tx((db) => resetOutbox(db, `block_hash = any($2)`, [gone]))
  }

  /** Outbox rows put back by a reorg: confirmed again when mined, else sent again. */
  async function reconfirmOutbox(): Promise<number> {
    const { rows } = await pool.query<Rebroadcast & { stale: boolean }>(
      `select id, raw, hash, from_address, nonce, reorged_at < now() - make_interval(secs => $2) as stale from chain_tx
        where chain_id = $1 and status = 'broadcast' and reorged_at is not null order by from_address, nonce`,
      [chainId, GIVE_UP_SECONDS],
    )
    const pending: Array<Rebroadcast & { stale: boolean }> = []
    for (const row of rows) {
      const receipt = await client.getTransactionReceipt({ hash: row.hash as Hex }).catch(() => undefined)
      if (!receipt) {
        pending.push(row)
        continue
      }
      await pool.query(
        `update chain_tx set status = $2, block_number = $3, block_hash = $4, gas_used = $5, contract_address = $6, updated_at = now()
          where id = $1 and status = 'broadcast'`,
        [row.id, receipt.status === 'success' ? 'confirmed' : 'failed', receipt.blockNumber.toString(), receipt.blockHash,
          receipt.gasUsed.toString(), receipt.contractAddress?.toLowerCase() ?? null],
      )
      log.info({ id: row.id, hash: row.hash, block: Number(receipt.blockNumber) }, 're-broadcast transaction confirmed again')
    }
    for (const row of pending) {
      try {
        await client.sendRawTransaction({ serializedTransaction: row.raw })
      } catch (err) {
        if (!isAlreadyKnown(err)) {
          log.warn({ err: String(err), id: row.id }, 're-broadcast failed')
          if (row.stale) {
            // E.g. a chain that came back without the funds: stop re-sending, say why.
            await pool.query(
              `update chain_tx set status = 'failed', error = $2, updated_at = now() where id = $1 and status = 'broadcast'`,
              [row.id, `re-broadcast after a reorg kept failing: ${String(err).slice(0, 300)}`],
            )
          }
          continue
        }
        // Its nonce is used up on chain but it has no receipt: another transaction took the nonce.
        const mined = await client.getTransactionCount({ address: getAddress(row.from_address), blockTag: 'latest' })
        if (mined > Number(row.nonce) && !(await client.getTransactionReceipt({ hash: row.hash as Hex }).catch(() => undefined))) {
          const { rows: siblings } = await pool.query<{ id: string; hash: string }>(
            `select id, hash from chain_tx where chain_id = $1 and from_address = $2 and nonce = $3 and id <> $4`,
            [chainId, row.from_address, row.nonce, row.id],
          )
          let winner: string | undefined
          for (const s of siblings) {
            if (await client.getTransactionReceipt({ hash: s.hash as Hex }).catch(() => undefined)) winner = s.id
          }
          if (winner) {
            // One of our own replacements (same nonce, higher fee) was mined instead.
            await pool.query(
              `update chain_tx set status = 'replaced', replaced_by = $2, updated_at = now() where id = $1 and status = 'broadcast'`,
              [row.id, winner],
            )
            continue
          }
          await pool.query(
            `update chain_tx set status = 'failed', error = $2, updated_at = now() where id = $1 and status = 'broadcast'`,
            [row.id, 'after a reorg, another transaction was mined with this nonce'],
          )
          log.error({ id: row.id, nonce: row.nonce }, 'a re-broadcast transaction lost its nonce to another transaction')
        }
      }
    }
    return pending.length
  }

  // ---------------------------------------------------------------- one range

  async function knownTokens(): Promise<Map<string, TokenInfo>> {
    const { rows } = await pool.query<{
      address: string; venue: TokenInfo['venue']; quote_address: string; pool_address: string | null
      pool_token_is_token0: boolean | null; pool_virtual_token: string | null; pool_virtual_quote: string | null
    }>(
      `select address, venue, quote_address, pool_address, pool_token_is_token0, pool_virtual_token, pool_virtual_quote
         from token where chain_id = $1 and indexed_block is not null`,
      [chainId],
    )
    return new Map(rows.map((r) => [r.address, {
      address: r.address,
      venue: r.venue,
      quoteAddress: r.quote_address,
      pool: r.pool_address,
      tokenIsToken0: r.pool_token_is_token0,
      virtualToken: BigInt(r.pool_virtual_token ?? 0),
      virtualQuote: BigInt(r.pool_virtual_quote ?? 0),
    }]))
  }

  async function poolParams(pair: Address, token: string, blockNumber: bigint) {
    const p = { address: pair, abi: AmmPairArtifact.abi, blockNumber } as const
    const [token0, v0, v1] = await Promise.all([
      client.readContract({ ...p, functionName: 'token0' }),
      client.readContract({ ...p, functionName: 'virtualReserve0' }),
      client.readContract({ ...p, functionName: 'virtualReserve1' }),
    ])
    const isToken0 = lower(token0) === token
    return { tokenIsToken0: isToken0, virtualToken: isToken0 ? v0 : v1, virtualQuote: isToken0 ? v1 : v0 }
  }

  async function quoteSymbolOf(quote: string, blockNumber: bigint): Promise<string> {
    const known = quoteSymbols.get(quote)
    if (known) return known
    return client
      .readContract({ address: getAddress(quote), abi: erc20Abi, functionName: 'symbol', blockNumber })
      .catch(() => '?')
  }

  /** Indexes [from, to]; throws RangeReorgedError when the chain changed while it was read. */
  async function indexRange(from: number, to: number, head: number): Promise<void> {
    const range = { fromBlock: BigInt(from), toBlock: BigInt(to), strict: true } as const
    const [venueLogs, selfFundedLogs] = await Promise.all([
      client.getLogs({ ...range, address: [contracts.venueA, contracts.venueB, contracts.feeLocker], events: [...launchpadEvents, ...launcherEvents, ...lockerEvents] }),
      client.getLogs({ ...range, event: selfFundedEvent }),
    ])

    const tokens = await knownTokens()
    const newTokens = new Map<string, NewToken>()
    const graduations: Array<{ token: string; pair: string; blockNumber: number }> = []

    // Pass 1: tokens and pools created in this range (their pools' Sync comes before the event).
    await mapLimit(venueLogs, RPC_PARALLEL, async (l) => {
      const addr = lower(l.address)
      const blockNumber = l.blockNumber
      if (addr === venueA && l.eventName === 'TokenCreated') {
        const a = l.args as { token: Address; creator: Address; quote: Address; name: string; symbol: string; supply: bigint }
        const curve = await client.readContract({ address: contracts.venueA, abi: BondingCurveLaunchpadArtifact.abi, functionName: 'getCurve', args: [a.token], blockNumber })
        const token = lower(a.token)
        newTokens.set(token, {
          address: token, venue: 'venue-a', symbol: a.symbol, name: a.name, quoteAddress: lower(a.quote),
          quoteSymbol: await quoteSymbolOf(lower(a.quote), blockNumber), creator: lower(a.creator), totalSupply: a.supply,
          poolAddress: null, verified: false, blockNumber: Number(blockNumber), txHash: l.transactionHash,
          curveVirtualQuote: curve.virtualQuoteReserve, graduationThreshold: curve.graduationThreshold,
          poolTokenIsToken0: null, poolVirtualToken: null, poolVirtualQuote: null,
        })
        tokens.set(token, { address: token, venue: 'venue-a', quoteAddress: lower(a.quote), pool: null, tokenIsToken0: null, virtualToken: 0n, virtualQuote: curve.virtualQuoteReserve })
      } else if (addr === venueB && l.eventName === 'PoolLaunched') {
        const a = l.args as { token: Address; pair: Address; creator: Address; quote: Address; name: string; symbol: string; supply: bigint }
        const token = lower(a.token)
        const p = await poolParams(a.pair, token, blockNumber)
        newTokens.set(token, {
          address: token, venue: 'venue-b', symbol: a.symbol, name: a.name, quoteAddress: lower(a.quote),
          quoteSymbol: await quoteSymbolOf(lower(a.quote), blockNumber), creator: lower(a.creator), totalSupply: a.supply,
          poolAddress: lower(a.pair), verified: false, blockNumber: Number(blockNumber), txHash: l.transactionHash,
          curveVirtualQuote: null, graduationThreshold: null,
          poolTokenIsToken0: p.tokenIsToken0, poolVirtualToken: p.virtualToken, poolVirtualQuote: p.virtualQuote,
        })
        tokens.set(token, { address: token, venue: 'venue-b', quoteAddress: lower(a.quote), pool: lower(a.pair), ...p })
      } else if (addr === venueA && l.eventName === 'Graduated') {
        const a = l.args as { token: Address; pair: Address }
        graduations.push({ token: lower(a.token), pair: lower(a.pair), blockNumber: Number(blockNumber) })
      }
    })
    for (const g of graduations) {
      const t = tokens.get(g.token)
      if (!t) continue
      const p = await poolParams(getAddress(g.pair), g.token, BigInt(g.blockNumber))
      Object.assign(t, { pool: g.pair, ...p })
      const nt = newTokens.get(g.token)
      if (nt) Object.assign(nt, { poolTokenIsToken0: p.tokenIsToken0, poolVirtualToken: p.virtualToken, poolVirtualQuote: p.virtualQuote })
    }
    await mapLimit(selfFundedLogs, RPC_PARALLEL, async (l) => {
      const a = l.args as { creator: Address; pair: Address; quote: Address; quoteAmount: bigint; supply: bigint }
      const token = lower(l.address)
      const blockNumber = l.blockNumber
      // Only a pool our factory made for (token, quote): anything else could emit fake swaps.
      const factoryPair = await client
        .readContract({ address: contracts.factory, abi: AmmFactoryArtifact.abi, functionName: 'getPair', args: [l.address, a.quote], blockNumber })
        .catch(() => undefined)
      if (!factoryPair || lower(factoryPair) !== lower(a.pair)) {
        log.debug({ token, tx: l.transactionHash }, 'SelfFundedLaunch without a factory pair: ignored')
        return
      }
      const t = { address: l.address, abi: erc20Abi, blockNumber } as const
      const [name, symbol, sent, p] = await Promise.all([
        client.readContract({ ...t, functionName: 'name' }).catch(() => '?'),
        client.readContract({ ...t, functionName: 'symbol' }).catch(() => '?'),
        client.getTransaction({ hash: l.transactionHash }),
        poolParams(a.pair, token, blockNumber),
      ])
      // Only tokens deployed by an account with exactly the reference SelfFundedToken creation code.
      const genuine =
        sent.to === null &&
        sent.input.startsWith(SelfFundedTokenArtifact.bytecode) &&
        lower(getContractAddress({ from: sent.from, nonce: BigInt(sent.nonce) })) === token
      if (!genuine) {
        log.debug({ token, tx: l.transactionHash }, 'SelfFundedLaunch from other code: ignored')
        return
      }
      // Verified is the operator's word (plus quote assets and stocks), never the indexer's.
      const verified = false
      newTokens.set(token, {
        address: token, venue: 'self-funded', symbol, name, quoteAddress: lower(a.quote),
        quoteSymbol: await quoteSymbolOf(lower(a.quote), blockNumber), creator: lower(a.creator), totalSupply: a.supply,
        poolAddress: lower(a.pair), verified, blockNumber: Number(blockNumber), txHash: l.transactionHash,
        curveVirtualQuote: null, graduationThreshold: null,
        poolTokenIsToken0: p.tokenIsToken0, poolVirtualToken: p.virtualToken, poolVirtualQuote: p.virtualQuote,
      })
      tokens.set(token, { address: token, venue: 'self-funded', quoteAddress: lower(a.quote), pool: lower(a.pair), ...p })
    })

    // Pool events of every pool known up to the end of this range.
    const byPool = new Map<string, TokenInfo>()
    for (const t of tokens.values()) if (t.pool && t.tokenIsToken0 !== null) byPool.set(t.pool, t)
    const pools = [...byPool.keys()].map((p) => getAddress(p))
    const poolLogs = (
      await Promise.all(
        Array.from({ length: Math.ceil(pools.length / POOL_CHUNK) }, (_, i) =>
          client.getLogs({ ...range, address: pools.slice(i * POOL_CHUNK, (i + 1) * POOL_CHUNK), events: poolEvents }),
        ),
      )
    ).flat()

    // Headers: blocks with logs (timestamps, consistency) and the tail kept for reorg checks.
    const tailFrom = Math.max(from, to - reorgDepth + 1, head - reorgDepth + 1)
    const wanted = new Set<number>([to])
    for (let n = tailFrom; n <= to; n++) wanted.add(n)
    const allLogs = [...venueLogs, ...selfFundedLogs, ...poolLogs]
    for (const l of allLogs) wanted.add(Number(l.blockNumber))
    const headers = new Map<number, Header>()
    for (const h of await mapLimit([...wanted].sort((a, b) => a - b), RPC_PARALLEL, header)) headers.set(h.number, h)
    for (const l of allLogs) {
      if (headers.get(Number(l.blockNumber))?.hash !== l.blockHash) throw new RangeReorgedError(`log in block ${l.blockNumber} is from another fork`)
    }
    for (let n = tailFrom + 1; n <= to; n++) {
      if (headers.get(n)!.parentHash !== headers.get(n - 1)!.hash) throw new RangeReorgedError(`block ${n} does not follow block ${n - 1}`)
    }
    if (headers.has(from)) {
      const { rows } = await pool.query<{ hash: string }>(`select hash from chain_block where chain_id = $1 and number = $2`, [chainId, from - 1])
      if (rows[0] && rows[0].hash !== headers.get(from)!.parentHash) throw new RangeReorgedError(`block ${from} does not follow the stored block ${from - 1}`)
    }

    // Traders of pool swaps are the accounts that sent the transactions.
    const swapTxs = [...new Set(poolLogs.filter((l) => l.eventName === 'Swap').map((l) => l.transactionHash))]
    const senders = new Map<string, string>()
    await mapLimit(swapTxs, RPC_PARALLEL, async (hash) => {
      const t = await client.getTransaction({ hash })
      senders.set(hash, lower(t.from))
    })

    // Pass 2: everything in chain order.
    allLogs.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1))
    const curveState = await latestCurveState([...tokens.values()].filter((t) => t.venue === 'venue-a').map((t) => t.address))
    const trades: TradeRow[] = []
    const snapshots: SnapshotRow[] = []
    const fees: FeeRow[] = []
    const lastSwap = new Map<string, TradeRow>()
    for (const l of allLogs) {
      const addr = lower(l.address)
      const blockNumber = Number(l.blockNumber)
      const base = { txHash: l.transactionHash, logIndex: l.logIndex, blockNumber }
      if (addr === venueA) {
        if (l.eventName === 'TokenCreated') {
          const a = l.args as { token: Address; supply: bigint }
          const token = lower(a.token)
          const v = newTokens.get(token)?.curveVirtualQuote ?? 0n
          curveState.set(token, { tokenReserve: a.supply, quoteReserve: 0n })
          snapshots.push({ token, blockNumber, logIndex: l.logIndex, source: 'curve', tokenReserve: a.supply, quoteReserve: 0n, price: priceFromReserves(v, a.supply) })
        } else if (l.eventName === 'Trade') {
          const a = l.args as { token: Address; trader: Address; isBuy: boolean; quoteAmount: bigint; tokenAmount: bigint; creatorFee: bigint; platformFee: bigint; priceAfter: bigint }
          const token = lower(a.token)
          if (!tokens.has(token)) continue
          trades.push({
            ...base, token, venue: 'venue-a', source: 'curve', trader: lower(a.trader), side: a.isBuy ? 'buy' : 'sell',
            quoteAmount: a.quoteAmount, tokenAmount: a.tokenAmount, creatorFee: a.creatorFee, platformFee: a.platformFee,
            feeAsset: 'quote', priceAfter: a.priceAfter,
          })
          if (a.creatorFee > 0n) fees.push({ ...base, token, kind: 'earned', quote: a.creatorFee, tokenAmount: 0n })
          const s = curveState.get(token)
          if (s) {
            const fee = a.creatorFee + a.platformFee
            if (a.isBuy) {
              s.tokenReserve -= a.tokenAmount
              s.quoteReserve += a.quoteAmount - fee
            } else {
              s.tokenReserve += a.tokenAmount
              s.quoteReserve -= a.quoteAmount + fee
            }
            snapshots.push({ token, blockNumber, logIndex: l.logIndex, source: 'curve', tokenReserve: s.tokenReserve, quoteReserve: s.quoteReserve, price: a.priceAfter })
          }
        } else if (l.eventName === 'CreatorFeesClaimed') {
          const a = l.args as { token: Address; amount: bigint }
          if (tokens.has(lower(a.token))) fees.push({ ...base, token: lower(a.token), kind: 'claimed', quote: a.amount, tokenAmount: 0n })
        }
      } else if (addr === feeLocker) {
        if (l.eventName === 'FeesAccrued') {
          const a = l.args as { token: Address; feeToken: Address; amount: bigint; creatorShare: bigint; platformShare: bigint }
          const token = lower(a.token)
          if (!tokens.has(token)) continue
          const inToken = lower(a.feeToken) === token
          fees.push({ ...base, token, kind: 'earned', quote: inToken ? 0n : a.creatorShare, tokenAmount: inToken ? a.creatorShare : 0n })
          const swap = lastSwap.get(token)
          if (swap && swap.txHash === l.transactionHash && swap.logIndex < l.logIndex) {
            swap.creatorFee += a.creatorShare
            swap.platformFee += a.platformShare
            swap.feeAsset = inToken ? 'token' : 'quote'
          }
        } else if (l.eventName === 'CreatorFeesClaimed') {
          const a = l.args as { token: Address; quoteAmount: bigint; tokenAmount: bigint }
          if (tokens.has(lower(a.token))) fees.push({ ...base, token: lower(a.token), kind: 'claimed', quote: a.quoteAmount, tokenAmount: a.tokenAmount })
        }
      } else if (byPool.has(addr)) {
        const t = byPool.get(addr)!
        if (l.eventName === 'Sync') {
          const a = l.args as { reserve0: bigint; reserve1: bigint }
          const [tokenReserve, quoteReserve] = t.tokenIsToken0 ? [a.reserve0, a.reserve1] : [a.reserve1, a.reserve0]
          snapshots.push({
            token: t.address, blockNumber, logIndex: l.logIndex, source: 'pool', tokenReserve, quoteReserve,
            price: priceFromReserves(quoteReserve + t.virtualQuote, tokenReserve + t.virtualToken),
          })
          const swap = lastSwap.get(t.address)
          if (swap && swap.txHash === l.transactionHash && swap.priceAfter === null) {
            swap.priceAfter = priceFromReserves(quoteReserve + t.virtualQuote, tokenReserve + t.virtualToken)
          }
        } else if (l.eventName === 'Swap') {
          const a = l.args as { amount0In: bigint; amount1In: bigint; amount0Out: bigint; amount1Out: bigint }
          const [tokenIn, quoteIn, tokenOut, quoteOut] = t.tokenIsToken0
            ? [a.amount0In, a.amount1In, a.amount0Out, a.amount1Out]
            : [a.amount1In, a.amount0In, a.amount1Out, a.amount0Out]
          const buy = tokenOut > 0n
          const trade: TradeRow = {
            ...base, token: t.address, venue: t.venue, source: 'pool', trader: senders.get(l.transactionHash) ?? '',
            side: buy ? 'buy' : 'sell', quoteAmount: buy ? quoteIn : quoteOut, tokenAmount: buy ? tokenOut : tokenIn,
            creatorFee: 0n, platformFee: 0n, feeAsset: buy ? 'quote' : 'token', priceAfter: null,
          }
          trades.push(trade)
          lastSwap.set(t.address, trade)
        }
      }
    }

    const timestamps = new Map([...headers.values()].map((h) => [h.number, new Date(Number(h.timestamp) * 1000)]))
    const keep = [...headers.values()].filter((h) => h.number >= tailFrom)

    await tx(async (db) => {
      const { rows: cp } = await db.query<{ block_number: string }>(
        `select block_number from chain_checkpoint where chain_id = $1 for update`,
        [chainId],
      )
      if (Number(cp[0]!.block_number) !== from - 1) throw new CheckpointMovedError(`checkpoint is ${cp[0]!.block_number}, not ${from - 1}`)
      const wallets = [...new Set([...[...newTokens.values()].map((t) => t.creator), ...trades.map((t) => t.trader)])]
      const { rows: agents } = await db.query<{ id: string; wallet_address: string }>(
        `select id, wallet_address from agent where wallet_address = any($1)`,
        [wallets],
      )
      const agentOf = new Map(agents.map((a) => [a.wallet_address, a.id]))
      for (const t of newTokens.values()) {
        await db.query(
          `insert into token (address, chain_id, symbol, name, venue, quote_symbol, quote_address, creator_address, creator_agent_id,
             pool_address, verified, total_supply, block_number, tx_hash, created_at, indexed_block, curve_virtual_quote,
             graduation_threshold, pool_token_is_token0, pool_virtual_token, pool_virtual_quote)
           values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$13,$16,$17,$18,$19,$20)
           on conflict (address) do update set
             symbol = excluded.symbol, name = excluded.name, venue = excluded.venue, quote_symbol = excluded.quote_symbol,
             quote_address = excluded.quote_address, creator_address = excluded.creator_address,
             creator_agent_id = coalesce(token.creator_agent_id, excluded.creator_agent_id),
             pool_address = coalesce(excluded.pool_address, token.pool_address),
             total_supply = excluded.total_supply, block_number = excluded.block_number, tx_hash = excluded.tx_hash,
             indexed_block = excluded.indexed_block, curve_virtual_quote = excluded.curve_virtual_quote,
             graduation_threshold = excluded.graduation_threshold, pool_token_is_token0 = excluded.pool_token_is_token0,
             pool_virtual_token = excluded.pool_virtual_token, pool_virtual_quote = excluded.pool_virtual_quote`,
          [t.address, chainId, t.symbol, t.name, t.venue, t.quoteSymbol, t.quoteAddress, t.creator, agentOf.get(t.creator) ?? null,
            t.poolAddress, t.verified, t.totalSupply.toString(), t.blockNumber, t.txHash, timestamps.get(t.blockNumber) ?? new Date(),
            t.curveVirtualQuote?.toString() ?? null, t.graduationThreshold?.toString() ?? null, t.poolTokenIsToken0,
            t.poolVirtualToken?.toString() ?? null, t.poolVirtualQuote?.toString() ?? null],
        )
      }
      for (const g of graduations) {
        const t = tokens.get(g.token)
        if (!t) continue
        await db.query(
          `update token set graduated = true, graduated_block = $2, pool_address = $3, pool_token_is_token0 = $4,
                  pool_virtual_token = $5, pool_virtual_quote = $6
            where address = $1`,
          [g.token, g.blockNumber, g.pair, t.tokenIsToken0, t.virtualToken.toString(), t.virtualQuote.toString()],
        )
      }
      for (const t of trades) {
        await db.query(
          `insert into trade (chain_id, tx_hash, log_index, token_address, venue, trader, side, quote_amount, token_amount, creator_fee,
             platform_fee, ours, block_number, at, source, fee_asset, price_after)
           values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17)
           on conflict (chain_id, tx_hash, log_index) do nothing`,
          [chainId, t.txHash, t.logIndex, t.token, t.venue, t.trader, t.side, t.quoteAmount.toString(), t.tokenAmount.toString(),
            t.creatorFee.toString(), t.platformFee.toString(), agentOf.has(t.trader), t.blockNumber,
            timestamps.get(t.blockNumber) ?? new Date(), t.source, t.feeAsset, t.priceAfter?.toString() ?? null],
        )
      }
      for (const s of snapshots) {
        await db.query(
          `insert into token_snapshot (chain_id, token_address, block_number, log_index, source, token_reserve, quote_reserve, price)
           values ($1,$2,$3,$4,$5,$6,$7,$8) on conflict do nothing`,
          [chainId, s.token, s.blockNumber, s.logIndex, s.source, s.tokenReserve.toString(), s.quoteReserve.toString(), s.price.toString()],
        )
      }
      for (const f of fees) {
        await db.query(
          `insert into creator_fee_event (chain_id, tx_hash, log_index, token_address, kind, quote_amount, token_amount, block_number)
           values ($1,$2,$3,$4,$5,$6,$7,$8) on conflict do nothing`,
          [chainId, f.txHash, f.logIndex, f.token, f.kind, f.quote.toString(), f.tokenAmount.toString(), f.blockNumber],
        )
      }
      for (const h of keep) {
        await db.query(
          `insert into chain_block (chain_id, number, hash) values ($1,$2,$3) on conflict (chain_id, number) do update set hash = excluded.hash`,
          [chainId, h.number, h.hash],
        )
      }
      await db.query(`delete from chain_block where chain_id = $1 and number <= $2`, [chainId, to - reorgDepth])
      await db.query(`update chain_checkpoint set block_number = $2 where chain_id = $1`, [chainId, to])
    })
    if (newTokens.size || trades.length) log.debug({ from, to, tokens: newTokens.size, trades: trades.length }, 'indexed')
  }

  /** The curve reserves after the last indexed trade of each token. */
  async function latestCurveState(addresses: string[]): Promise<Map<string, { tokenReserve: bigint; quoteReserve: bigint }>> {
    const { rows } = await pool.query<{ token_address: string; token_reserve: string; quote_reserve: string }>(
      `select distinct on (token_address) token_address, token_reserve, quote_reserve from token_snapshot
        where chain_id = $1 and source = 'curve' and token_address = any($2)
        order by token_address, block_number desc, log_index desc`,
      [chainId, addresses],
    )
    return new Map(rows.map((r) => [r.token_address, { tokenReserve: BigInt(r.token_reserve), quoteReserve: BigInt(r.quote_reserve) }]))
  }

  // ---------------------------------------------------------------- passes

  async function pass(): Promise<SyncResult> {
    let reorgedTo: number | null = null
    let rebroadcastCount = 0
    const rewound = async () => {
      const r = await reconcile()
      if (r) {
        reorgedTo = reorgedTo === null ? r.ancestor : Math.min(reorgedTo, r.ancestor)
        rebroadcastCount += await rebroadcast(r.rows)
      }
    }
    const headNow = async () => Number(await client.getBlockNumber({ cacheTime: 0 }))
    await rewound()
    rebroadcastCount += await rebroadcast(await verifyUnindexedOutbox(await checkpoint()))
    // After the checks: re-broadcast transactions may already be in new blocks.
    let head = await headNow()
    for (let attempts = 0, moved = 0; ; ) {
      const cp = await checkpoint()
      const target = head - confirmations
      if (cp >= target) break
      const to = Math.min(target, cp + maxRange)
      try {
        await indexRange(cp + 1, to, head)
      } catch (err) {
        if (err instanceof CheckpointMovedError && ++moved <= 20) {
          log.debug({ reason: err.message }, 'another indexer wrote this range')
          continue
        }
        if (!(err instanceof RangeReorgedError) || ++attempts > 5) throw err
        log.info({ reason: err.message }, 'the chain changed while a range was read: checking for a reorg')
        await rewound()
        head = await headNow()
      }
    }
    await reconfirmOutbox()
    return { checkpoint: await checkpoint(), head, reorgedTo, rebroadcast: rebroadcastCount }
  }

  function schedule(ms: number) {
    if (stopped) return
    timer = setTimeout(() => {
      timer = undefined
      void syncOnce()
        .then(() => {
          failures = 0
          schedule(pollMs)
        })
        .catch((err) => {
          failures++
          log.warn({ err: err instanceof Error ? err.message : String(err), failures }, 'indexer pass failed; retrying')
          schedule(Math.min(pollMs * 2 ** Math.min(failures, 5), 30_000))
        })
    }, ms)
    timer.unref()
  }

  /** One pass now: reorg check, index up to the head, outbox reconfirmation. */
  function syncOnce(): Promise<SyncResult> {
    return serial(pass)
  }

  return {
    syncOnce,
    /** Runs a pass at once, then every `pollMs`. */
    start() {
      if (!stopped) return
      stopped = false
      schedule(0)
    },
    /** Stops the loop and waits for a pass in flight. */
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      timer = undefined
      await tail
    },
  }
}
