import type { Logger } from '../../logger.ts'
import type { AutomationRow, AutomationsStore } from '../../adapters/db/automations.store.ts'
import type { AutomationState, Automations } from '../../domain/automations/ports.ts'
import type { AutomationTrigger } from '../../domain/automations/automation.types.ts'
import type { EffectHandler } from '../runtime/index.ts'
import type { ActorRuntime } from '../runtime/index.ts'
import { AGENT_AUTOMATIONS } from '../agent/agent.machine.ts'
import { automationKind, type AutomationContext } from './automation.machine.ts'
import { priceMatters } from '../../domain/automations/orderRules.ts'

const iso = (t: Date | string) => new Date(t).toISOString()

/** An automation's row as the domain reads it. */
function stateOf(row: AutomationRow): AutomationState {
  const c = row.ctx as unknown as AutomationContext
  return { ...c, status: row.status as AutomationState['status'], updatedAt: iso(row.updated_at), cursorAt: row.cursor_at }
}

/**
 * Automations over the actor runtime: an automation is an `automation` actor whose id is the
 * automation id; commands go through the runtime (409 when its state refuses one), reads through
 * the store.
 *
 * @example
 * const automations = createAutomations({ runtime, store: createAutomationsStore(pool) })
 */
export function createAutomations({ runtime, store }: { runtime: ActorRuntime; store: AutomationsStore }): Automations {
  return {
    async create(input) {
      await runtime.create(automationKind.kind, { id: input.automationId, accountId: input.accountId, input }).catch((err) => {
        // The same automation created first by a concurrent retry of its request.
        if ((err as { code?: string }).code !== '23505') throw err
      })
    },
    get: async (id) => {
      const row = await store.get(id)
      return row && stateOf(row)
    },
    list: async (q) => (await store.list(q)).map(stateOf),
    async send(id, command) {
      await runtime.send(id, command)
      return stateOf((await store.get(id))!)
    },
  }
}

/**
 * A symbol against a pattern with `*` (any run of characters) and `?` (one), any case. Matched
 * without a regular expression: a pattern such as `*a*a*a*a*a*a*a*b` made into one backtracks
 * exponentially on a long symbol and would stop the node's event loop; this walk goes back only to
 * the last `*`, so it takes at most pattern length x symbol length steps.
 */
export function symbolMatches(pattern: string, symbol: string): boolean {
  const p = pattern.toLowerCase()
  const s = symbol.toLowerCase()
  let i = 0
  let j = 0
  let star = -1
  let resume = 0
  while (j < s.length) {
    if (i < p.length && (p[i] === '?' || p[i] === s[j])) {
      i++
      j++
    } else if (i < p.length && p[i] === '*') {
      star = i++
      resume = j
    } else if (star >= 0) {
      i = star + 1
      j = ++resume
    } else return false
  }
  while (p[i] === '*') i++
  return i === p.length
}

type Launched = { address: string; symbol: string; venue: string; quote_symbol: string; creator_address: string }

/** A launch an automation's `new_launch` trigger asks for (venue, quote, creator, symbol pattern). */
export function launchMatches(t: Extract<AutomationTrigger, { type: 'new_launch' }>, l: Launched): boolean {
  return (!t.venue || t.venue === l.venue) && (!t.quote || t.quote === l.quote_symbol) && (!t.creator || t.creator === l.creator_address.toLowerCase()) && (!t.symbolPattern || symbolMatches(t.symbolPattern, l.symbol))
}

/** Statuses a sniper hears launches in: one executing a firing queues them (its pending triggers). */
const LAUNCH_LISTENERS = ['armed', 'executing'] as const
/** Statuses a price threshold is evaluated in: a threshold still met after a firing ends is met on the next block. */
const PRICE_LISTENERS = ['armed'] as const

/**
 * What fires automations besides their own timers: the trigger feed. It keeps a durable
 * checkpoint, the last block it evaluated (`automation_trigger_checkpoint`), and each time the
 * indexer has run a pass (the first after a start or a failover included) it evaluates every
 * block after it up to the indexed one: launches in those blocks matched against the filters of
 * each sniper that is armed or executing (one executing queues them as pending triggers), and
 * price thresholds, trailing stops and brackets of armed automations read from pool reserves at
 * the newest block, once, for the tokens whose price may have moved (`priceOrders`). Only
 * automations of running agents are asked. The checkpoint moves only once the triggers are in
 * the automations' inboxes, so a failure or a crash evaluates the same blocks again; each
 * trigger is deduplicated by (automation, block) or (automation, token), so nothing fires twice.
 * A reorg moves the checkpoint back with the index's (indexer/reorg.ts).
 */
export function createAutomationTriggers(deps: {
  runtime: ActorRuntime
  store: AutomationsStore
  prices(mints: string[]): Promise<Map<string, string | null>>
  logger: Logger
  chainId: number
}) {
  /**
   * What the feed knows between passes (in memory: a start or a failover begins empty, so its
   * first pass reads every armed order's token): the ETH price it last read (every ETH-quoted
   * token's USD price moves with it), each armed order's version when last evaluated (a
   * changed or unseen one (its actor's version), such as one armed since, is evaluated whatever traded), and the
   * orders whose last evaluation sent an event (evaluated again every block, as their state may
   * not have moved yet).
   */
  let lastEth: string | null | undefined
  let seen = new Map<string, string>()
  let hot = new Set<string>()

  /**
   * Price thresholds, trailing stops and brackets, in one read of the armed ones and one read of
   * prices at the newest block: only the tokens whose pools traded in blocks (from, to] (the
   * index's trades), those the index does not follow (quote assets, stocks), and those of orders
   * not evaluated as they stand; every token when the ETH price moved. A threshold met fires;
   * a trailing stop or a bracket hears the price when it means something to it (a new high, a
   * level reached).
   */
  async function priceOrders(from: number, block: number) {
    const armed = await deps.store.ofRunningAgents(['price_threshold', 'trailing_stop', 'bracket'], PRICE_LISTENERS)
    if (armed.length === 0) {
      seen = new Map()
      hot = new Set()
      return
    }
    const mintOf = (a: { ctx: Record<string, unknown> }) => ((a.ctx as unknown as AutomationContext).trigger as { mint: string }).mint
    const mints = [...new Set(armed.map(mintOf))]
    const [{ tracked, traded }, eth] = await Promise.all([deps.store.tradedAmong(mints, from, block), deps.prices(['ETH']).then((m) => m.get('ETH') ?? null)])
    const ethMoved = eth !== lastEth
    const fresh = (a: { id: string; version: string }) => hot.has(a.id) || seen.get(a.id) !== a.version
    const wanted = ethMoved
      ? mints
      : [...new Set(armed.filter((a) => fresh(a) || !tracked.has(mintOf(a).toLowerCase()) || traded.has(mintOf(a).toLowerCase())).map(mintOf))]
    const now = wanted.length > 0 ? await deps.prices(wanted) : new Map<string, string | null>()
    // Each order's event is in its own inbox, deduplicated by (order, block): sent side by side.
    const sent = armed.map(async (a) => {
      const c = a.ctx as unknown as AutomationContext
      const price = now.get(mintOf(a))
      if (!price) return undefined
      if (c.trigger.type === 'price_threshold') {
        const t = c.trigger
        const met = t.operator === 'gte' ? Number(price) >= Number(t.priceUsd) : Number(price) <= Number(t.priceUsd)
        if (!met) return undefined
        await deps.runtime.enqueue(a.id, a.account_id, { type: 'automation.trigger', source: { source: 'price', block: String(block), priceUsd: price } }, `price:${a.id}:${block}`)
      } else {
        if (!priceMatters(c.trigger, c.high, price)) return undefined
        await deps.runtime.enqueue(a.id, a.account_id, { type: 'automation.price', block: String(block), priceUsd: price }, `price:${a.id}:${block}`)
      }
      return a.id
    })
    const nextHot = new Set((await Promise.all(sent)).filter((id) => id !== undefined))
    // Only once every event is in its inbox: a failed pass evaluates the same orders again.
    lastEth = eth
    seen = new Map(armed.map((a) => [a.id, a.version]))
    hot = nextHot
  }
  async function launches(from: number, to: number) {
    const launched = await deps.store.launchedBetween(from, to)
    if (launched.length === 0) return
    for (const a of await deps.store.ofRunningAgents(['new_launch'], LAUNCH_LISTENERS)) {
      const t = (a.ctx as unknown as AutomationContext).trigger as Extract<AutomationTrigger, { type: 'new_launch' }>
      for (const l of launched.filter((x) => launchMatches(t, x))) {
        const token = { address: l.address, symbol: l.symbol, venue: l.venue, quote: l.quote_symbol, creator: l.creator_address }
        await deps.runtime.enqueue(a.id, a.account_id, { type: 'automation.trigger', source: { source: 'launch', token } }, `launch:${a.id}:${l.address}`)
      }
    }
  }
  /** Evaluates the blocks after the checkpoint up to `indexedTo`, then moves the checkpoint there. */
  async function catchUp(indexedTo: number) {
    const from = await deps.store.triggerCheckpoint(deps.chainId, indexedTo)
    if (from >= indexedTo) return
    await Promise.all([priceOrders(from, indexedTo), launches(from, indexedTo)])
    await deps.store.advanceTriggerCheckpoint(deps.chainId, from, indexedTo)
  }
  // One evaluation at a time; what the indexer reached meanwhile is evaluated right after.
  let wanted: number | null = null
  let running: Promise<void> | null = null
  function drain(): Promise<void> {
    running ??= (async () => {
      while (wanted !== null) {
        const to = wanted
        wanted = null
        await catchUp(to).catch((err) => deps.logger.warn({ err: String(err), indexedTo: to }, 'automation triggers failed; the blocks are evaluated again after the next pass'))
      }
    })().finally(() => {
      running = null
      if (wanted !== null) void drain()
    })
    return running
  }
  return {
    /** The indexer ran a pass and reaches block `indexedTo`; resolves once the blocks up to there are evaluated (or failed, to be tried again). */
    onIndexed(indexedTo: number): Promise<void> {
      wanted = Math.max(wanted ?? indexedTo, indexedTo)
      return drain()
    },
  }
}

/** The agent's effect that tells its automations it started (a missed firing fires once) or was deleted (they are cancelled). */
export function createAgentAutomationsEffect({ runtime, store }: { runtime(): ActorRuntime; store: AutomationsStore }): Record<string, EffectHandler> {
  return {
    async [AGENT_AUTOMATIONS](effect) {
      const { signal } = effect.params as { signal: 'agentStarted' | 'cancel' }
      // One statement for all of them (an agent may have thousands); the inbox poll delivers the events.
      const told = await store.tellAgentAutomations({ agentId: effect.actorId, event: { type: signal === 'cancel' ? 'automation.cancel' : 'automation.agentStarted' }, dedupePrefix: effect.id })
      if (told > 0) runtime().wake()
      return null
    },
  }
}
