import type pg from 'pg'
import { InvalidStateError } from '../../domain/errors.ts'
import type { LaunchInput } from '../../domain/launches/launch.schema.ts'
import { launchSettled } from '../../domain/launches/launchResource.ts'
import type { LaunchContext, LaunchPorts, LaunchRecord } from '../../domain/launches/ports.ts'
import type { ActorEntry } from '../runtime/index.ts'
import type { ActorRuntime } from '../runtime/index.ts'
import { reserveSpend, spentTodayUsd } from '../../adapters/db/walletOp.store.ts'
import { marketGuardError } from '../../adapters/db/marketGuard.ts'
import { actorTimes } from '../runtime/index.ts'
import { childOfRunningEffect } from '../runtime/index.ts'

/** Launch actors on the runtime: created, started and waited for through its commits. */
export function createLaunchActors(pool: pg.Pool, runtime: ActorRuntime): LaunchPorts['actors'] {
  async function record(entry: ActorEntry | undefined): Promise<LaunchRecord | undefined> {
    if (!entry) return undefined
    const r = (await actorTimes(pool, entry.id))!
    return {
      id: entry.id,
      accountId: entry.accountId,
      isLaunch: entry.kind.kind === 'launch',
      status: entry.status,
      context: entry.snapshot.context as LaunchContext,
      createdAt: new Date(r.created_at).toISOString(),
      updatedAt: new Date(r.updated_at).toISOString(),
    }
  }
  return {
    find: async (launchId) => record(await runtime.get(launchId)),
    async create(input: LaunchInput, parentId) {
      const args = { id: input.launchId, accountId: input.accountId, input }
      // For a step of its parent (a model's tool call): created with the step's outcome, and started.
      const asChild = childOfRunningEffect(parentId)
      if (asChild) {
        const child = runtime.createWithOutcome(asChild, 'launch', { ...args, parentId: asChild.actorId }, { type: 'launch.begin' })
        const now = new Date().toISOString()
        return { id: child.id, accountId: child.accountId, isLaunch: true, status: child.status, context: child.snapshot.context as LaunchContext, createdAt: now, updatedAt: now }
      }
      try {
        await runtime.create('launch', { ...args, parentId: parentId ?? null })
      } catch (err) {
        // A concurrent request with the same launch id created it first.
        if ((err as { code?: string }).code !== '23505') throw err
      }
      return undefined
    },
    async start(launchId) {
      let entry = await runtime.get(launchId)
      if (entry?.status === 'pending') {
        entry = await runtime.send(launchId, { type: 'launch.begin' }).catch((err: unknown) => {
          // Started by a concurrent request meanwhile.
          if (err instanceof InvalidStateError) return runtime.get(launchId)
          throw err
        })
      }
      return record(entry)
    },
    waitEnd: async (launchId, timeoutMs) => record(await runtime.waitFor(launchId, (e) => launchSettled(e.status), timeoutMs)),
  }
}

/** A self-funded launch's seed, checked and recorded against the agent's 24-hour spend as a wallet operation's is. */
export function createLaunchSpend(pool: pg.Pool): LaunchPorts['spend'] {
  return {
    spentTodayUsd: (agentId, exceptId) => spentTodayUsd(pool, agentId, { exceptId }),
    reserve: ({ launchId, policyCheck, ...p }) => reserveSpend(pool, { id: launchId, kind: 'launch', ...p, before: policyCheck }).catch(marketGuardError('launch a token')),
  }
}
