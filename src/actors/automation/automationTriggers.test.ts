import { describe, expect, it } from 'vitest'
import type { AutomationsStore } from '../../adapters/db/automations.store.ts'
import { createLogger } from '../../logger.ts'
import type { ActorRuntime } from '../runtime/index.ts'
import { createAutomationTriggers } from './automations.ts'

/** The trigger feed over a store and a runtime in memory: what it delivers for which blocks, and what a failure does. */
function feed({ failFirst = 0 } = {}) {
  let checkpoint: number | null = null
  let failures = failFirst
  const launches = new Map<number, string>([[11, 'CAT'], [12, 'DOG'], [13, 'EMU']])
  const evaluated: Array<[number, number]> = []
  const delivered: string[] = []
  const store = {
    async triggerCheckpoint(_chainId: number, indexedTo: number) {
      checkpoint ??= indexedTo
      return checkpoint
    },
    async advanceTriggerCheckpoint(_chainId: number, from: number, to: number) {
      if (checkpoint === from) checkpoint = to
    },
    async launchedBetween(from: number, to: number) {
      evaluated.push([from, to])
      if (failures > 0 && failures--) throw new Error('database went away')
      return [...launches].filter(([b]) => b > from && b <= to).map(([, symbol]) => ({ address: `0x${symbol}`, symbol, venue: 'venue-a', quote_symbol: 'ETH', creator_address: '0xc' }))
    },
    async ofRunningAgents(types: readonly string[]) {
      return types.includes('new_launch') ? [{ id: 'a1', account_id: 'acc', status: 'armed', ctx: { trigger: { type: 'new_launch' } } }] : []
    },
  } as unknown as AutomationsStore
  const runtime = { enqueue: async (_id: string, _acc: string, e: { source: { token: { symbol: string } } }) => void delivered.push(e.source.token.symbol) } as unknown as ActorRuntime
  const t = createAutomationTriggers({ runtime, store, prices: async () => new Map(), logger: createLogger({ level: 'silent' }), chainId: 1 })
  return { t, evaluated, delivered, checkpoint: () => checkpoint, start: (n: number) => void (checkpoint = n) }
}

describe('the automations trigger feed', () => {
  it('evaluates every block after its checkpoint, the first pass after a start included', async () => {
    const f = feed()
    f.start(10)
    await f.t.onIndexed(12)
    await f.t.onIndexed(12)
    await f.t.onIndexed(13)
    expect(f.evaluated).toEqual([[10, 12], [12, 13]])
    expect(f.delivered).toEqual(['CAT', 'DOG', 'EMU'])
    expect(f.checkpoint()).toBe(13)
  })

  it('a failed evaluation keeps its checkpoint: the same blocks are evaluated after the next pass', async () => {
    const f = feed({ failFirst: 1 })
    f.start(10)
    await f.t.onIndexed(11)
    expect([f.delivered, f.checkpoint()]).toEqual([[], 10])
    await f.t.onIndexed(12)
    expect(f.evaluated).toEqual([[10, 11], [10, 12]])
    expect([f.delivered, f.checkpoint()]).toEqual([['CAT', 'DOG'], 12])
  })

  it('a chain seen for the first time starts at the indexed block; evaluations never overlap', async () => {
    const f = feed()
    await f.t.onIndexed(11)
    expect(f.evaluated).toEqual([])
    await Promise.all([f.t.onIndexed(12), f.t.onIndexed(13)])
    expect(f.evaluated).toEqual([[11, 12], [12, 13]])
    expect(f.delivered).toEqual(['DOG', 'EMU'])
  })
})

describe('the trigger feed price reads', () => {
  /** Armed orders in memory over two tokens; `traded` the tokens traded in the evaluated blocks; every price read recorded. */
  function orders() {
    let checkpoint: number | null = 10
    const rows = new Map<string, { id: string; account_id: string; status: string; version: string; ctx: Record<string, unknown> }>()
    const traded = new Set<string>()
    const price = new Map<string, string>([['ETH', '3000'], ['0xaa', '2'], ['0xbb', '5']])
    const reads: string[][] = []
    const delivered: string[] = []
    const store = {
      async triggerCheckpoint() { return checkpoint! },
      async advanceTriggerCheckpoint(_c: number, from: number, to: number) { if (checkpoint === from) checkpoint = to },
      async launchedBetween() { return [] },
      async ofRunningAgents(types: readonly string[]) { return types.includes('new_launch') ? [] : [...rows.values()] },
      async tradedAmong(mints: readonly string[]) {
        const tracked = new Set(mints.filter((m) => m.startsWith('0x')))
        return { tracked, traded: new Set([...traded].filter((m) => tracked.has(m))) }
      },
    } as unknown as AutomationsStore
    const runtime = { enqueue: async (id: string, _acc: string, e: { type: string }, key: string) => void delivered.push(`${e.type}:${key}`) } as unknown as ActorRuntime
    const prices = async (mints: string[]) => {
      reads.push(mints)
      return new Map(mints.map((m) => [m, price.get(m) ?? null]))
    }
    const t = createAutomationTriggers({ runtime, store, prices, logger: createLogger({ level: 'silent' }), chainId: 1 })
    const arm = (id: string, trigger: Record<string, unknown>, high: string | null = null, version = '1') => rows.set(id, { id, account_id: 'acc', status: 'armed', version, ctx: { trigger, high } })
    return { t, rows, traded, price, reads, delivered, arm, tokenReads: () => reads.filter((r) => !(r.length === 1 && r[0] === 'ETH')).map((r) => [...r].sort()) }
  }

  it('reads each token once a block, only those that traded, the orders armed since and every token when ETH moved', async () => {
    const f = orders()
    f.arm('stop-a', { type: 'price_threshold', mint: '0xaa', operator: 'lte', priceUsd: '1' })
    f.arm('trail-a', { type: 'trailing_stop', mint: '0xaa', trailPct: 50 })
    f.arm('trail-b', { type: 'trailing_stop', mint: '0xbb', trailPct: 50 })
    // The first pass (after a start) reads every armed order's token, in one read.
    await f.t.onIndexed(11)
    expect(f.tokenReads()).toEqual([['0xaa', '0xbb']])
    expect(f.delivered).toEqual(['automation.price:price:trail-a:11', 'automation.price:price:trail-b:11'])
    // The trailing stops took their high (their versions moved): evaluated once more at the same price, nothing sent.
    f.arm('trail-a', { type: 'trailing_stop', mint: '0xaa', trailPct: 50 }, '2', '2')
    f.arm('trail-b', { type: 'trailing_stop', mint: '0xbb', trailPct: 50 }, '5', '2')
    await f.t.onIndexed(12)
    expect(f.tokenReads().at(-1)).toEqual(['0xaa', '0xbb'])
    expect(f.delivered).toHaveLength(2)
    // Nothing traded, nothing changed: no token read.
    const before = f.tokenReads().length
    await f.t.onIndexed(13)
    expect(f.tokenReads()).toHaveLength(before)
    // 0xbb traded to a new high: only it is read, and its trailing stop hears it.
    f.traded.add('0xbb')
    f.price.set('0xbb', '6')
    await f.t.onIndexed(14)
    expect(f.tokenReads().at(-1)).toEqual(['0xbb'])
    expect(f.delivered.at(-1)).toBe('automation.price:price:trail-b:14')
    f.traded.clear()
    // A trailing stop armed between blocks on a token that did not trade: evaluated (it needs its high).
    f.arm('trail-a2', { type: 'trailing_stop', mint: '0xaa', trailPct: 50 })
    f.arm('trail-b', { type: 'trailing_stop', mint: '0xbb', trailPct: 50 }, '6', '3')
    await f.t.onIndexed(15)
    expect(f.tokenReads().at(-1)).toEqual(['0xaa', '0xbb'])
    expect(f.delivered.at(-1)).toBe('automation.price:price:trail-a2:15')
    f.arm('trail-a2', { type: 'trailing_stop', mint: '0xaa', trailPct: 50 }, '2', '2')
    await f.t.onIndexed(16)
    // ETH moved: every token is read again; a met stop-loss fires once a block while it stays armed and met.
    f.price.set('ETH', '1500')
    f.price.set('0xaa', '1')
    await f.t.onIndexed(17)
    expect(f.tokenReads().at(-1)).toEqual(['0xaa', '0xbb'])
    expect(f.delivered.filter((d) => d.includes('stop-a'))).toEqual(['automation.trigger:price:stop-a:17'])
    await f.t.onIndexed(18)
    expect(f.delivered.filter((d) => d.includes('stop-a'))).toEqual(['automation.trigger:price:stop-a:17', 'automation.trigger:price:stop-a:18'])
  })
})
