import type pg from 'pg'
import { formatUnits, getAddress, parseAbiItem, parseUnits, type Address } from 'viem'
import type { ChainHandle } from './chain.ts'
import type { WalletDeps } from '../http/appDeps.ts'
import { AgentDeletedError, ForbiddenError, InsufficientFundsError, ValidationError, IdempotencyKeyReusedError } from '../domain/errors.ts'
import { checkPolicy } from '../domain/agents/policyCheck.ts'
import type { AgentsRepository } from '../domain/agents/ports.ts'
import { balanceOf, resolveToken, tokenUsd, type TokenInfo } from './tokenInfo.ts'
import { chainUnavailableOf, createPriceReader } from './priceReader.ts'
import { formatPrice, formatUsd } from '../domain/tokens/priceMath.ts'
import type { TransferParams } from './transferPlanner.ts'

/** Parses a decimal amount for a token: > 0 and no more decimals than the token has. */
export function parseTokenAmount(amount: string, decimals: number, field = 'amount'): bigint {
  const [, frac = ''] = amount.split('.')
  if (frac.length > decimals) throw new ValidationError({ [field]: `At most ${decimals} decimals for this token.` })
  const value = parseUnits(amount, decimals)
  if (value <= 0n) throw new ValidationError({ [field]: 'Must be greater than 0.' })
  return value
}

/**
 * Transfers from an agent wallet, only to an address on that agent's whitelist whose hold has
 * passed, within its policy, through the wallet's transaction outbox.
 *
 * @example
 * await transfer({ pool, wallet, agents }, accountId, { agentId, to, token: 'USDC', amount: '25' }, opId)
 */
export async function transfer(
  { pool, wallet, agents }: { pool: pg.Pool; wallet: WalletDeps; agents: AgentsRepository },
  accountId: string,
  body: { agentId: string; to: Address; token: string; amount: string },
  opId: string,
) {
  const agent = await agents.getOwned(accountId, body.agentId)
  // A retry (same Idempotency-Key) after a crash answers with the transfer already made, before
  // any check that the first one changed the outcome of (balance, daily cap).
  const prior = await pool.query<{ params: TransferParams; usd: string; agent_id: string }>(
    `select x.snapshot->'context'->'params' as params, w.usd_value::text as usd, w.agent_id from wallet_op w join actor x on x.id = w.id
      where w.id = $1 and w.account_id = $2 and w.kind = 'transfer'`,
    [opId, accountId],
  )
  if (prior.rows[0]) {
    const { params: p, usd } = prior.rows[0]
    // The key's first request may have failed after its transfer was made (so the key was not
    // kept): a retry with another body must not be answered with this transfer as if it were its own.
    const token = await resolveToken({ pool, chain: wallet.chain }, body.token)
    const same =
      prior.rows[0].agent_id === body.agentId &&
      token?.address === p.token &&
      token.native === p.native &&
      body.to.toLowerCase() === p.to &&
      parseTokenAmount(body.amount, token.decimals).toString() === p.amount
    if (!same) throw new IdempotencyKeyReusedError()
    const op = await wallet.run({ opId, accountId, agentId: body.agentId, kind: 'transfer', params: p, usdValue: usd })
    return { ...op, token: token.symbol, tokenAddress: p.token, to: p.to, amount: body.amount, valueUsd: usd }
  }
  if (agent.status === 'deleted') throw new AgentDeletedError()
  const token = await resolveToken({ pool, chain: wallet.chain }, body.token)
  if (!token) throw new ValidationError({ token: 'Unknown token; a symbol such as ETH, USDC, TSLAx or a token address.' })
  const amount = parseTokenAmount(body.amount, token.decimals)
  const { rows } = await pool.query<{ usable: boolean }>(
    `select usable_at <= now() as usable from agent_whitelist where agent_id = $1 and address = $2`,
    [body.agentId, body.to.toLowerCase()],
  )
  if (!rows[0]) throw new ForbiddenError(`${body.to} is not on this agent's whitelist.`, 'address_not_whitelisted')
  if (!rows[0].usable) throw new ForbiddenError(`${body.to} was whitelisted recently and is still in its hold period.`, 'address_in_cooldown')
  const held = await balanceOf(wallet.chain, token, agent.walletAddress)
  if (held < amount) {
    throw new InsufficientFundsError({ message: `The agent holds ${formatUnits(held, token.decimals)} ${token.symbol}.` })
  }
  const value = await tokenUsd(wallet.chain, await createPriceReader(wallet.chain), token, amount)
  const usd = value ? formatUsd(value.amountUsd18) : '0.00'
  const policyFor = (spentTodayUsd: string) => checkPolicy(agent.policy, { tokens: [token], usdValue: usd, spentTodayUsd })
  policyFor(await wallet.spentTodayUsd(body.agentId))
  const params: TransferParams = { token: token.address, native: token.native, amount: amount.toString(), to: body.to.toLowerCase() as Address }
  const op = await wallet.run({ opId, accountId, agentId: body.agentId, kind: 'transfer', params, usdValue: usd, checkSpend: policyFor })
  return { ...op, token: token.symbol, tokenAddress: token.address, to: params.to, amount: body.amount, valueUsd: usd }
}

/**
 * ETH and every token the wallet may hold (quote assets, stocks, tokens it launched or traded),
 * valued in USD, with cost basis and unrealised PnL from the agent's own swaps.
 */
export async function portfolio(
  { pool, wallet, agents }: { pool: pg.Pool; wallet: WalletDeps; agents: AgentsRepository },
  accountId: string,
  agentId: string,
) {
  const agent = await agents.getOwned(accountId, agentId)
  const chain = wallet.chain
  const owner = agent.walletAddress
  const candidates = new Map<string, TokenInfo>()
  for (const ref of ['ETH', 'USDC', ...chain.manifest.stocks.map((s) => s.symbol)]) {
    const t = await resolveToken({ pool, chain }, ref)
    if (t) candidates.set(t.native ? 'ETH' : t.address, t)
  }
  const weth = await resolveToken({ pool, chain }, chain.manifest.contracts.weth)
  if (weth) candidates.set('WETH', { ...weth, symbol: 'WETH', native: false })
  // Tokens it launched, traded on chain (indexer), or swapped through this service (no indexer lag).
  const { rows: known } = await pool.query<{ address: string }>(
    `select address from token where creator_agent_id = $1
     union select token_address from trade where trader = $2
     union select x.snapshot->'context'->'params'->>'tokenOut' from wallet_op w join actor x on x.id = w.id
      where w.agent_id = $1 and w.kind = 'swap' and x.status = 'confirmed'`,
    [agentId, owner.toLowerCase()],
  )
  const received = await receivedTokens({ pool, chain }, agentId, owner)
  for (const address of [...known.map((k) => k.address), ...received]) {
    if (!address || candidates.has(address)) continue
    const t = await resolveToken({ pool, chain }, address)
    if (t) candidates.set(address, t)
  }
  const cost = await costBasis(pool, agentId)
  const prices = await createPriceReader(chain)
  const holdings = []
  let total = 0n
  for (const token of candidates.values()) {
    // A contract that merely emits a Transfer to the wallet may not answer balanceOf: skipped.
    const balance = await balanceOf(chain, token, owner).catch((err) => {
      if (token.native || chainUnavailableOf(err)) throw err
      return 0n
    })
    if (balance === 0n && !token.native) continue
    const priced = await tokenUsd(chain, prices, token, balance).catch(() => undefined)
    const value = priced ? formatUsd(priced.amountUsd18) : null
    if (value) total += BigInt(value.replace('.', ''))
    const basis = cost.get(token.address)
    holdings.push({
      symbol: token.symbol,
      address: token.native ? null : token.address,
      decimals: token.decimals,
      verified: token.verified,
      balance: formatUnits(balance, token.decimals),
      priceUsd: priced ? formatPrice(priced.unitUsd18) : null,
      valueUsd: value,
      costBasisUsd: basis ?? null,
      unrealizedPnlUsd: basis !== undefined && value !== null ? centsToUsd(BigInt(value.replace('.', '')) - BigInt(basis.replace('.', ''))) : null,
    })
  }
  return { agentId, walletAddress: owner, holdings, totalValueUsd: centsToUsd(total) }
}

/** Blocks per `Transfer` log scan. */
const TRANSFER_SCAN_BLOCKS = 10_000n

/**
 * Tokens the wallet received by plain ERC-20 transfers (an airdrop, another wallet paying it),
 * which neither the indexer nor our own operations know of. Scans `Transfer` logs to the wallet
 * from where the last scan of this agent stopped (the deployment's start block at first) and
 * keeps what it finds; a portfolio then costs one scan of the blocks since its last read.
 */
async function receivedTokens({ pool, chain }: { pool: pg.Pool; chain: ChainHandle }, agentId: string, owner: Address): Promise<string[]> {
  const { rows } = await pool.query<{ scanned: string }>(`select scanned_block::text as scanned from agent_transfer_scan where agent_id = $1`, [agentId])
  let from = rows[0] ? BigInt(rows[0].scanned) + 1n : BigInt(chain.manifest.startBlock)
  const head = await chain.publicClient.getBlockNumber({ cacheTime: 0 })
  while (from <= head) {
    const to = from + TRANSFER_SCAN_BLOCKS - 1n < head ? from + TRANSFER_SCAN_BLOCKS - 1n : head
    const logs = await chain.publicClient.getLogs({ event: TRANSFER_EVENT, args: { to: getAddress(owner) }, fromBlock: from, toBlock: to, strict: false })
    // ERC-721 shares the signature with a fourth (indexed tokenId) topic: not a fungible balance.
    const found = new Set(logs.filter((l) => l.topics.length === 3).map((l) => l.address.toLowerCase()))
    if (found.size > 0) {
      await pool.query(
        `insert into agent_received_token (agent_id, token_address) select $1, unnest($2::text[]) on conflict do nothing`,
        [agentId, [...found]],
      )
    }
    await pool.query(
      `insert into agent_transfer_scan (agent_id, scanned_block) values ($1, $2)
       on conflict (agent_id) do update set scanned_block = greatest(agent_transfer_scan.scanned_block, excluded.scanned_block)`,
      [agentId, to.toString()],
    )
    from = to + 1n
  }
  const { rows: all } = await pool.query<{ token_address: string }>(`select token_address from agent_received_token where agent_id = $1`, [agentId])
  return all.map((r) => r.token_address)
}

const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)')

function centsToUsd(cents: bigint): string {
  const neg = cents < 0n
  const s = (neg ? -cents : cents).toString().padStart(3, '0')
  return `${neg ? '-' : ''}${s.slice(0, -2)}.${s.slice(-2)}`
}

/**
 * Cost basis per token from the agent's confirmed swaps (average cost: USD paid for what was
 * bought, reduced in proportion by what was sold). Swap operations record `tokenOut`,
 * `amountOut` and `valueInUsd`; an agent with no swaps has no basis.
 */
async function costBasis(pool: pg.Pool, agentId: string): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ ctx: { params: Record<string, unknown>; result: Record<string, unknown> | null } }>(
    `select x.snapshot->'context' as ctx from wallet_op w join actor x on x.id = w.id
      where w.agent_id = $1 and w.kind = 'swap' and x.status = 'confirmed' order by w.created_at`,
    [agentId],
  )
  const held = new Map<string, { amount: bigint; cents: bigint }>()
  for (const { ctx } of rows) {
    const p = ctx.params as { tokenIn?: string; tokenOut?: string; amountIn?: string; valueInUsd?: string }
    const r = (ctx.result ?? {}) as { amountOutBaseUnits?: string; amountOut?: string }
    const paidCents = p.valueInUsd ? BigInt(p.valueInUsd.replace('.', '')) : 0n
    const outAmount = r.amountOutBaseUnits ? BigInt(r.amountOutBaseUnits) : 0n
    if (p.tokenOut && outAmount > 0n) {
      const h = held.get(p.tokenOut) ?? { amount: 0n, cents: 0n }
      held.set(p.tokenOut, { amount: h.amount + outAmount, cents: h.cents + paidCents })
    }
    if (p.tokenIn && p.amountIn) {
      const h = held.get(p.tokenIn)
      if (h && h.amount > 0n) {
        const sold = BigInt(p.amountIn)
        const keep = sold >= h.amount ? 0n : h.amount - sold
        held.set(p.tokenIn, { amount: keep, cents: (h.cents * keep) / h.amount })
      }
    }
  }
  return new Map([...held].map(([k, v]) => [k, centsToUsd(v.cents)]))
}

/** The wallet's transaction outbox, newest first. */
export async function transactions(
  { pool, agents }: { pool: pg.Pool; agents: AgentsRepository },
  accountId: string,
  agentId: string,
  { limit, before }: { limit: number; before?: string | undefined },
) {
  await agents.assertOwned(accountId, agentId)
  const params: unknown[] = [agentId, limit + 1]
  const cond = before ? `and (created_at, id) < ((select created_at from chain_tx where id = $3), $3)` : ''
  if (before) params.push(before)
  const { rows } = await pool.query(
    `select id, kind, hash, nonce, status, to_address, block_number, gas_used, contract_address, replaced_by, created_at, updated_at
       from chain_tx where agent_id = $1 ${cond} order by created_at desc, id desc limit $2`,
    params,
  )
  const page = rows.slice(0, limit).map((r) => ({
    id: r.id,
    kind: r.kind,
    hash: r.hash,
    nonce: Number(r.nonce),
    status: r.status,
    to: r.to_address,
    blockNumber: r.block_number === null ? null : Number(r.block_number),
    gasUsed: r.gas_used,
    contractAddress: r.contract_address,
    replacedBy: r.replaced_by,
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
  }))
  return { transactions: page, nextCursor: rows.length > limit ? Buffer.from(page.at(-1)!.id).toString('base64url') : null }
}
