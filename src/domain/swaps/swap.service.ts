import type { ChainHandle } from '../../chain/chain.ts'
import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { erc20Abi, formatUnits, getAddress, parseUnits, type Address } from 'viem'
import type { WalletDeps } from '../../http/appDeps.ts'
import type { ActorRuntime } from '../../actors/actorRuntime.ts'
import type { WalletOpInput } from '../../actors/walletOp.machine.ts'
import { walletOpEnded, walletOpView, type WalletOpStart } from '../../chain/walletOps.ts'
import { InsufficientFundsError, SimulationRevertedError } from '../../chain/txSender.ts'
import { findRoute, priceRoute, reverseRoute, type PricedRoute, type SwapRoute } from '../../chain/swapRoute.ts'
import {
  approveTx,
  gasLimitFrom,
  sellBackCheck,
  simulateTxs,
  spenderOf,
  swapTx,
  type SwapParams,
  type SwapTokenInfo,
} from '../../chain/swapPlanner.ts'
import { checkPolicy, checkTokenLists } from '../agents/policyCheck.ts'
import { effectivePolicySql } from '../agents/effectiveGuardrails.ts'
import type { Policy } from '../agents/policy.ts'
import { IdempotencyKeyReusedError, NotFoundError, ServiceError, ValidationError, type FieldErrors } from '../errors.ts'
import { fieldErrorsOf } from '../../http/validate.ts'
import { swapBody, type SwapBody } from './swap.schema.ts'
import { claimQuote, loadQuote, QUOTE_TTL_MS, QuoteMismatchError, saveQuote, type StoredQuote } from './swapQuotes.ts'
import { lookupToken } from '../../chain/tokenInfo.ts'
import { pinToLatestBlock, type PinnedChain } from '../../chain/pinnedReads.ts'
import { createPriceReader } from '../../chain/priceReader.ts'
import { formatUsd } from '../tokens/priceMath.ts'

/** Router deadline after the transaction is planned. */
const DEADLINE_SECONDS = 600n
/** Above this, a quote warns about price impact (the policy cap decides whether it may execute). */
const HIGH_IMPACT_BPS = 500
/** Codes of refusals that happen before anything is signed: the request answers 422, not a failed swap. */
const PRE_CHAIN_CODES = new Set(['simulation_reverted', 'insufficient_funds', 'slippage_exceeded'])
/** The reference router's and launchpad's reverts for an output under the caller's minimum. */
const SLIPPAGE_REVERTS = /AmmRouter: insufficient output amount|Launchpad: (tokens|quote) out below minimum/

type Warning = { code: string; message: string }

type Prepared = {
  body: SwapBody
  agent: { wallet: Address; policy: Partial<Policy> }
  tokenIn: SwapTokenInfo
  tokenOut: SwapTokenInfo
  amountIn: bigint
}

type AgentRow = { wallet_address: Address; policy: Partial<Policy>; status: string }

const fmt = (v: bigint | string, decimals: number) => formatUnits(BigInt(v), decimals)

export type SwapsDeps = { pool: pg.Pool; wallet: WalletDeps; runtime: ActorRuntime }
export type SwapsService = ReturnType<typeof createSwapsService>

/**
 * Swaps from agent wallets: quotes (kept in Postgres for 30 s; a `quoteId` executes once) and execution as a durable `swap` wallet
 * operation, after validation, the unverified-token acknowledgement, the agent's policy, a
 * balance check and a simulation of every transaction of the plan.
 *
 * @example
 * const q = await swaps.quote(accountId, { agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '1', slippageBps: 50 })
 * const r = await swaps.execute(accountId, { ...body, quoteId: q.quoteId }, opId)
 */
export function createSwapsService(deps: SwapsDeps) {
  const { pool, wallet } = deps
  const chain = wallet.chain



  /** Parses the body and checks every field against the account, the chain and each other; one 422 names them all. */
  async function prepare(accountId: string, raw: unknown, mode: 'quote' | 'execute'): Promise<Prepared> {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ValidationError({ body: 'Expected a JSON object.' })
    const parsed = swapBody.safeParse(raw)
    const errors: FieldErrors = parsed.success ? {} : fieldErrorsOf(parsed.error)
    const field = <K extends keyof SwapBody>(k: K): SwapBody[K] | undefined => {
      if (errors[k]) return undefined
      const r = swapBody.shape[k].safeParse((raw as Record<string, unknown>)[k])
      return r.success ? (r.data as SwapBody[K]) : undefined
    }
    const agentId = field('agentId')
    const [agentRow, tokenIn, tokenOut] = await Promise.all([
      agentId
        ? pool
            .query<AgentRow>(
              `select a.wallet_address, ${effectivePolicySql('a')} as policy, x.status from agent a join actor x on x.id = a.id::text
                where a.id = $1 and a.account_id = $2`,
              [agentId, accountId],
            )
            .then((r) => r.rows[0])
        : undefined,
      // A symbol names a verified token only: a look-alike launch is named by its address.
      field('tokenIn') ? lookupToken({ pool, chain }, field('tokenIn')!, { verifiedSymbolsOnly: true }) : undefined,
      field('tokenOut') ? lookupToken({ pool, chain }, field('tokenOut')!, { verifiedSymbolsOnly: true }) : undefined,
    ])
    if (agentId && !agentRow) errors.agentId = 'No such agent in this account.'
    else if (agentRow?.status === 'deleted') errors.agentId = 'The agent is deleted.'
    if (tokenIn && 'error' in tokenIn) errors.tokenIn = tokenIn.error
    if (tokenOut && 'error' in tokenOut) errors.tokenOut = tokenOut.error
    const tin = tokenIn && 'token' in tokenIn ? tokenIn.token : undefined
    const tout = tokenOut && 'token' in tokenOut ? tokenOut.token : undefined
    if (tin && tout && tin.address === tout.address) {
      errors.tokenOut = tin.native !== tout.native ? 'ETH and WETH are the same asset; wrapping is not a swap.' : 'Must differ from tokenIn.'
    }
    const amount = field('amountIn')
    let amountIn = 0n
    if (amount !== undefined && tin) {
      const decimals = amount.split('.')[1]?.length ?? 0
      if (decimals > tin.decimals) errors.amountIn = `At most ${tin.decimals} decimals for ${tin.symbol}.`
      else amountIn = parseUnits(amount, tin.decimals)
    }
    if (mode === 'quote' && (raw as Record<string, unknown>).quoteId !== undefined) errors.quoteId = 'Only POST /swap/execute takes a quoteId.'
    if (Object.keys(errors).length > 0) throw new ValidationError(errors)
    return {
      body: parsed.data!,
      agent: { wallet: agentRow!.wallet_address.toLowerCase() as Address, policy: agentRow!.policy },
      tokenIn: tin!,
      tokenOut: tout!,
      amountIn,
    }
  }

  function minOut(amountOut: bigint, slippageBps: number) {
    return (amountOut * BigInt(10_000 - slippageBps)) / 10_000n
  }

  function describe(p: { tokenIn: SwapTokenInfo; tokenOut: SwapTokenInfo }) {
    const known = new Map<string, string>([
      [chain.manifest.contracts.weth.toLowerCase(), 'WETH'],
      [chain.manifest.contracts.usdc.toLowerCase(), 'USDC'],
      [p.tokenIn.address, p.tokenIn.native ? 'WETH' : p.tokenIn.symbol],
      [p.tokenOut.address, p.tokenOut.native ? 'WETH' : p.tokenOut.symbol],
    ])
    const decimals = new Map<string, number>([
      [chain.manifest.contracts.weth.toLowerCase(), 18],
      [chain.manifest.contracts.usdc.toLowerCase(), 6],
      [p.tokenIn.address, p.tokenIn.decimals],
      [p.tokenOut.address, p.tokenOut.decimals],
    ])
    return { symbol: (a: string) => known.get(a) ?? a, decimals: (a: string) => decimals.get(a) ?? 18 }
  }

  function routeView(route: SwapRoute, d: ReturnType<typeof describe>, amounts?: bigint[]) {
    return route.hops.map((h, i) => ({
      venue: h.venue,
      address: h.address,
      tokenIn: { symbol: d.symbol(h.tokenIn), address: h.tokenIn },
      tokenOut: { symbol: d.symbol(h.tokenOut), address: h.tokenOut },
      feeBps: h.feeBps,
      ...(amounts ? { amountIn: fmt(amounts[i]!, d.decimals(h.tokenIn)), amountOut: fmt(amounts[i + 1]!, d.decimals(h.tokenOut)) } : {}),
    }))
  }

  async function deadline(c: ChainHandle = chain) {
    const block = await c.publicClient.getBlock({ blockTag: 'latest' })
    return block.timestamp + DEADLINE_SECONDS
  }

  /** Prices the route, values both sides in USD and gathers the warnings. */
  async function price(p: Prepared, route: SwapRoute | undefined, pinned: Promise<PinnedChain> = pinToLatestBlock(chain)) {
    // Every read of one pricing is of the same block, and shared with other quotes of that block.
    const at = await pinned
    const priced: PricedRoute = route
      ? await priceRoute(at, route, p.amountIn)
      : await findRoute(at, { tokenIn: p.tokenIn.address, tokenOut: p.tokenOut.address, amountIn: p.amountIn })
    // Valued at mid prices of the same block: the reader reads the block `at` is pinned to.
    const prices = await createPriceReader(at, at.blockNumber)
    const usd = (token: Address, amount: bigint) =>
      prices.amountUsd(token, amount).then((v) => (v === null ? null : formatUsd(v)))
    const [inUsd, outUsd, dl] = await Promise.all([
      usd(p.tokenIn.address, p.amountIn).catch(() => null),
      usd(p.tokenOut.address, priced.amountOut).catch(() => null),
      deadline(at),
    ])
    const warnings: Warning[] = []
    for (const [side, t] of [['tokenIn', p.tokenIn], ['tokenOut', p.tokenOut]] as const) {
      if (!t.verified) {
        warnings.push({
          code: 'unverified_token',
          message: `${side} ${t.symbol} (${t.address}) is not a verified token; anyone can create a token with any name. Executing needs acknowledgeUnverified: true.`,
        })
      }
    }
    if (priced.priceImpactBps > HIGH_IMPACT_BPS) {
      warnings.push({ code: 'high_price_impact', message: `This trade moves the price by about ${(priced.priceImpactBps / 100).toFixed(2)}%.` })
    }
    if (inUsd === null && outUsd === null) {
      warnings.push({ code: 'unpriced', message: 'Neither token has a market to value it in USD; the policy caps see $0.' })
    }
    if (!p.tokenOut.verified) {
      warnings.push(
        ...(await sellBackCheck(chain, {
          wallet: p.agent.wallet,
          route: priced,
          reverse: reverseRoute(priced),
          tokenIn: p.tokenIn,
          tokenOut: p.tokenOut,
          amountIn: p.amountIn,
          expectedOut: priced.amountOut,
          deadline: dl,
        })),
      )
    }
    // The policy needs a value for what leaves the wallet: an unpriced token in is valued by what comes out.
    return { priced, valueInUsd: inUsd ?? outUsd ?? '0.00', valueOutUsd: outUsd, deadline: dl, warnings }
  }

  const bareRoute = (r: PricedRoute): SwapRoute => ({ kind: r.kind, path: r.path, hops: r.hops })

  async function quote(accountId: string, raw: unknown) {
    // The latest block is asked for while the request is checked: two round trips at once.
    const pinned = pinToLatestBlock(chain)
    pinned.catch(() => {})
    const p = await prepare(accountId, raw, 'quote')
    checkTokenLists(p.agent.policy, [p.tokenIn, p.tokenOut])
    const { priced, valueInUsd, valueOutUsd, warnings } = await price(p, undefined, pinned)
    const now = Date.now()
    const quoteId = randomUUID()
    const min = minOut(priced.amountOut, p.body.slippageBps)
    const stored: StoredQuote = {
      accountId,
      agentId: p.body.agentId,
      tokenIn: p.tokenIn.address,
      nativeIn: p.tokenIn.native,
      tokenOut: p.tokenOut.address,
      nativeOut: p.tokenOut.native,
      amountIn: p.amountIn,
      slippageBps: p.body.slippageBps,
      route: bareRoute(priced),
      minAmountOut: min,
      expiresAt: now + QUOTE_TTL_MS,
    }
    await saveQuote(pool, quoteId, stored)
    const d = describe(p)
    return {
      quoteId,
      expiresAt: new Date(now + QUOTE_TTL_MS).toISOString(),
      agentId: p.body.agentId,
      tokenIn: p.tokenIn,
      tokenOut: p.tokenOut,
      amountIn: fmt(p.amountIn, p.tokenIn.decimals),
      amountOut: fmt(priced.amountOut, p.tokenOut.decimals),
      minAmountOut: fmt(min, p.tokenOut.decimals),
      slippageBps: p.body.slippageBps,
      priceImpactBps: priced.priceImpactBps,
      route: routeView(priced, d, priced.amounts),
      fees: priced.fees.map((f) => ({
        hop: f.hop,
        venue: priced.hops[f.hop]!.venue,
        feeBps: f.feeBps,
        token: { symbol: d.symbol(f.token), address: f.token },
        amount: fmt(f.amount, d.decimals(f.token)),
      })),
      valueInUsd,
      valueOutUsd,
      warnings,
    }
  }

  /** The stored quote a `quoteId` names, refused when expired, unknown, used by another swap, or for another request. */
  async function storedQuote(accountId: string, p: Prepared, quoteId: string, opId: string): Promise<StoredQuote> {
    const q = await loadQuote(pool, { accountId, quoteId, opId })
    const same =
      q.agentId === p.body.agentId &&
      q.tokenIn === p.tokenIn.address &&
      q.nativeIn === p.tokenIn.native &&
      q.tokenOut === p.tokenOut.address &&
      q.nativeOut === p.tokenOut.native &&
      q.amountIn === p.amountIn &&
      q.slippageBps === p.body.slippageBps
    if (!same) throw new QuoteMismatchError()
    return q
  }

  async function existingSwap(accountId: string, opId: string) {
    const entry = await deps.runtime.get(opId)
    if (!entry) return undefined
    const ctx = entry.snapshot.context as WalletOpInput
    if (entry.accountId !== accountId || entry.kind.kind !== 'walletop' || ctx.kind !== 'swap') throw new NotFoundError('Swap')
    return entry
  }

  async function execute(accountId: string, raw: unknown, opId: string) {
    const p = await prepare(accountId, raw, 'execute')
    // A retry of a request that already created its operation (same Idempotency-Key) waits for that one.
    const existing = await existingSwap(accountId, opId)
    if (existing) {
      // Only the same request may be answered with it (its first answer may have been lost).
      const ctx = existing.snapshot.context as WalletOpInput & { params: SwapParams }
      const same =
        ctx.agentId === p.body.agentId &&
        ctx.params.tokenIn === p.tokenIn.address &&
        ctx.params.tokenOut === p.tokenOut.address &&
        ctx.params.tokenInInfo.native === p.tokenIn.native &&
        ctx.params.tokenOutInfo.native === p.tokenOut.native &&
        ctx.params.amountIn === p.amountIn.toString() &&
        ctx.params.slippageBps === p.body.slippageBps
      if (!same) throw new IdempotencyKeyReusedError()
      return finish(accountId, opId, undefined)
    }
    const stored = p.body.quoteId ? await storedQuote(accountId, p, p.body.quoteId, opId) : undefined
    const unverified = [p.tokenIn, p.tokenOut].filter((t) => !t.verified)
    if (unverified.length > 0 && p.body.acknowledgeUnverified !== true) {
      throw new ServiceError(
        `${unverified.map((t) => `${t.symbol} (${t.address})`).join(' and ')} ${unverified.length > 1 ? 'are' : 'is'} not verified; ` +
          'send acknowledgeUnverified: true to trade it anyway.',
        { code: 'unverified_token', status: 422 },
      )
    }
    const { priced, valueInUsd, valueOutUsd, deadline: dl, warnings } = await price(p, stored?.route)
    const minAmountOut = stored?.minAmountOut ?? minOut(priced.amountOut, p.body.slippageBps)
    const policyFor = (spentTodayUsd: string) =>
      checkPolicy(p.agent.policy, {
        tokens: [p.tokenIn, p.tokenOut].map((t) => ({ symbol: t.symbol, address: t.address, verified: t.verified })),
        usdValue: valueInUsd,
        priceImpactBps: priced.priceImpactBps,
        spentTodayUsd,
      })
    policyFor(await wallet.spentTodayUsd(p.body.agentId))

    const client = chain.publicClient
    const owner = getAddress(p.agent.wallet)
    const [ethBalance, tokenBalance, block] = await Promise.all([
      client.getBalance({ address: owner }),
      p.tokenIn.native
        ? Promise.resolve(0n)
        : client.readContract({ address: getAddress(p.tokenIn.address), abi: erc20Abi, functionName: 'balanceOf', args: [owner] }),
      client.getBlock({ blockTag: 'latest' }),
    ])
    const held = p.tokenIn.native ? ethBalance : tokenBalance
    if (held < p.amountIn) {
      throw new ServiceError(
        `The agent wallet holds ${fmt(held, p.tokenIn.decimals)} ${p.tokenIn.symbol}; this swap needs ${fmt(p.amountIn, p.tokenIn.decimals)}.`,
        { code: 'insufficient_funds', status: 422 },
      )
    }
    const spender = spenderOf(chain, priced, p.tokenIn.native)
    const allowance = spender
      ? await client.readContract({ address: getAddress(p.tokenIn.address), abi: erc20Abi, functionName: 'allowance', args: [owner, getAddress(spender)] })
      : 0n
    const approve = spender && allowance < p.amountIn ? spender : null
    const swap = swapTx(chain, {
      route: priced,
      nativeIn: p.tokenIn.native,
      nativeOut: p.tokenOut.native,
      amountIn: p.amountIn,
      minAmountOut,
      recipient: owner,
      deadline: dl,
    })
    const txs = approve ? [approveTx(p.tokenIn.address, approve), swap] : [swap]
    // Every transaction in order, as the chain would run them: the swap sees the approval.
    const simulated = await simulateTxs(chain, owner, txs)
    const failed = simulated.find((c) => !c.ok)
    if (failed && SLIPPAGE_REVERTS.test(failed.reason ?? '')) {
      throw new ServiceError(
        `The price moved: this swap would now return less than minAmountOut (${fmt(minAmountOut, p.tokenOut.decimals)} ${p.tokenOut.symbol}). ` +
          'Quote again, or allow more slippageBps.',
        { code: 'slippage_exceeded', status: 422 },
      )
    }
    if (failed) throw new SimulationRevertedError(failed.reason ?? 'reverted')
    const gases = simulated.map((c) => gasLimitFrom(c.gasUsed))
    const maxFeePerGas = (block.baseFeePerGas ?? 1_000_000_000n) * 2n + 1_000_000_000n
    const needed = gases.reduce((s, g) => s + g * maxFeePerGas, 0n) + (swap.value ?? 0n)
    if (ethBalance < needed) throw new InsufficientFundsError({ needed, balance: ethBalance })

    const params: SwapParams = {
      tokenIn: p.tokenIn.address,
      tokenOut: p.tokenOut.address,
      tokenInInfo: p.tokenIn,
      tokenOutInfo: p.tokenOut,
      amountIn: p.amountIn.toString(),
      minAmountOut: minAmountOut.toString(),
      expectedAmountOut: priced.amountOut.toString(),
      slippageBps: p.body.slippageBps,
      route: bareRoute(priced),
      approve,
      swapGas: approve ? gases[1]!.toString() : null,
      deadline: dl.toString(),
      valueInUsd,
      valueOutUsd,
      priceImpactBps: priced.priceImpactBps,
      quoteId: p.body.quoteId ?? null,
      warnings,
    }
    const quoteId = p.body.quoteId
    // The quote is consumed with the swap's record, in one transaction: it executes once.
    const claim = quoteId ? (db: pg.PoolClient) => claimQuote(db, { quoteId, opId }) : undefined
    return finish(accountId, opId, { agentId: p.body.agentId, params, usdValue: valueInUsd, checkSpend: policyFor, claim })
  }

  /** Starts (or finds) the operation, waits for its end and answers; a refusal before signing is a 422. */
  async function finish(
    accountId: string,
    opId: string,
    start: Pick<WalletOpStart, 'agentId' | 'params' | 'usdValue' | 'checkSpend' | 'claim'> & { params: SwapParams } | undefined,
  ) {
    const op = start ? await wallet.run({ opId, accountId, kind: 'swap', ...start }) : undefined
    const entry = await deps.runtime.get(opId)
    if (!entry) throw new NotFoundError('Swap')
    const view = op ?? (await waitEnd(opId))
    const params = (entry.snapshot.context as WalletOpInput).params as SwapParams
    if (view.status === 'failed' && view.error && PRE_CHAIN_CODES.has(view.error.code)) {
      // The price can also move between this request's simulation and the send's own estimate.
      const code = view.error.code === 'simulation_reverted' && SLIPPAGE_REVERTS.test(view.error.message) ? 'slippage_exceeded' : view.error.code
      throw new ServiceError(view.error.message, { code, status: 422 })
    }
    return swapView(view, params)
  }

  async function waitEnd(opId: string) {
    const entry = await deps.runtime.waitFor(opId, walletOpEnded, 20_000)
    if (!entry) throw new NotFoundError('Swap')
    return walletOpView(entry)
  }

  function swapView(op: ReturnType<typeof walletOpView>, p: SwapParams) {
    const r = op as typeof op & { amountOutBaseUnits?: string; gasUsed?: string; blockNumber?: string }
    const tin = p.tokenInInfo
    const tout = p.tokenOutInfo
    const d = describe({ tokenIn: tin, tokenOut: tout })
    return {
      id: op.id,
      agentId: op.agentId,
      status: op.status,
      txHash: op.txHash,
      tokenIn: tin,
      tokenOut: tout,
      amountIn: fmt(p.amountIn, tin.decimals),
      amountOut: r.amountOutBaseUnits !== undefined ? fmt(r.amountOutBaseUnits, tout.decimals) : null,
      amountOutBaseUnits: r.amountOutBaseUnits ?? null,
      expectedAmountOut: fmt(p.expectedAmountOut, tout.decimals),
      minAmountOut: fmt(p.minAmountOut, tout.decimals),
      slippageBps: p.slippageBps,
      priceImpactBps: p.priceImpactBps,
      valueInUsd: p.valueInUsd,
      valueOutUsd: p.valueOutUsd,
      gasUsed: r.gasUsed ?? null,
      blockNumber: r.blockNumber ?? null,
      route: routeView(p.route, d),
      quoteId: p.quoteId,
      warnings: p.warnings,
      error: op.error,
    }
  }

  return {
    quote,
    execute,
    /** One swap of the account, for polling one that had not ended when execute answered. */
    async get(accountId: string, id: string) {
      const entry = await existingSwap(accountId, id)
      if (!entry) throw new NotFoundError('Swap')
      return swapView(walletOpView(entry), (entry.snapshot.context as WalletOpInput).params as SwapParams)
    },
  }
}
