import { describe, expect, it } from 'vitest'
import type { AutomationsStore } from '../../adapters/db/automations.store.ts'
import { createLogger } from '../../logger.ts'
import type { ActorRuntime } from '../../runtime/actorRuntime.ts'
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
