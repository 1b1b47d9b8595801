import type pg from 'pg'
import { scheduleFactsOf } from '../../adapters/db/agents.repository.ts'
import { coverRefusalOf, coversGuard } from '../../adapters/db/credits.repository.ts'
import { InvalidStateError, RunInProgressError } from '../../domain/errors.ts'
import { chatMessageInsert } from '../../adapters/db/chatMessages.repository.ts'
import type { RunInput, Runs, RunState, RunStatus } from '../../domain/runs/ports.ts'
import type { ActorRuntime } from '../runtime/index.ts'
import { RUN_FINAL, RUN_MODEL_CALL, RUN_TELL_PARENT, runKind, type RunContext } from './run.machine.ts'
import type { CreditsRepository } from '../../domain/billing/ports.ts'
import { mergeWrites, type SqlWrite } from '../runtime/index.ts'
import type { NewEffect } from '../runtime/index.ts'
import { heldCallIdOf } from '../conversation/conversation.effects.ts'
import type { ActorRecord } from '../runtime/index.ts'
import { ActorEventRefusedError } from '../runtime/index.ts'
import { childOfRunningEffect } from '../runtime/index.ts'

/** The unique index that allows one run not ended per agent (Migration20261123210000_runs). */
const ONE_ACTIVE_RUN = 'actor_run_one_active'
/** The states of a run not ended (the states `actor_run_one_active` covers). */
const ACTIVE = ['queued', 'running'] as const

/** A run as the domain reads it (a compacted run's context has no `runId` nor `accountId`: its actor's row has them). */
function stateOf(row: Pick<ActorRecord<RunContext>, 'id' | 'accountId' | 'status' | 'context' | 'createdAt' | 'updatedAt'>): RunState {
  const { transcript: _t, pending: _p, timeUp: _u, stepsUsed: _s, ...c } = row.context
  return { ...c, runId: row.id, accountId: row.accountId, status: row.status as RunStatus, createdAt: row.createdAt, updatedAt: row.updatedAt }
}

/**
 * Runs over the actor runtime: a run is a `run` actor whose id is the run id, created in one
 * statement with its goal as the user message (its steps are then written as the agent's chat
 * messages too, under the run id). A run is its agent's child; its end reaches the agent's inbox
 * in its own commit only when a schedule check that met it in progress asked (`tellAgentAtEnd`:
 * the check is made again then). The database refuses a second run not ended for an agent.
 */
export function createRuns({ pool, runtime, hold }: { pool: pg.Pool; runtime: ActorRuntime; hold?: FirstCallHold | undefined }): Runs {
  async function get(runId: string): Promise<RunState | undefined> {
    const row = await runtime.read.actorOfKind<RunContext>(runKind.kind, runId)
    return row && stateOf(row)
  }
  return {
    async start(run, { coverCredits } = {}) {
      const goal = chatMessageInsert({ accountId: run.accountId, agentId: run.agentId, turnId: run.runId, key: 'user', role: 'user', content: run.goal, model: run.model })
      // The first model call's credits held in the run's own insert, under that call's effect id.
      const held = hold?.creditsOf(run)
      const alongside = hold && held ? withFirstCallHold(hold, run, held, goal) : goal
      // Checked in the insert against the first call's whole hold when the run holds it.
      const cover = coverCredits !== undefined ? Math.max(coverCredits, held ?? 0) : undefined
      try {
        const guard = cover !== undefined ? coversGuard(run.accountId, cover) : undefined
        const args = { id: run.runId, accountId: run.accountId, input: held ? { ...run, firstCallHold: held } : run, parentId: run.agentId, alongside, guard }
        // Started by its agent's schedule check (the agent's effect): created in the commit that
        // records the check's outcome on the agent, one statement for both.
        const asChild = childOfRunningEffect(run.agentId)
        const entry = asChild ? runtime.createWithOutcome(asChild, runKind.kind, args) : await runtime.create(runKind.kind, args)
        // The run as created, without reading its row back.
        const at: Date = ('createdAt' in entry ? (entry.createdAt as Date | undefined) : undefined) ?? new Date()
        const iso = new Date(at).toISOString()
        return stateOf({ id: run.runId, accountId: run.accountId, status: entry.status, context: entry.snapshot.context as RunContext, createdAt: iso, updatedAt: iso })
      } catch (err) {
        // The same run id again (an Idempotency-Key retried after a crash): the run exists; its row is the answer.
        if ((err as { code?: string; constraint?: string }).code === '23505' && (err as { constraint?: string }).constraint === 'actor_pkey') return (await get(run.runId))!
        if ((err as { code?: string; constraint?: string }).code === '23505' && (err as { constraint?: string }).constraint === ONE_ACTIVE_RUN) throw new RunInProgressError()
        // Refused by the cover's check or by the hold itself (CR402 either way, the credits available in it).
        const refused = (cover !== undefined || held) && coverRefusalOf(err, cover ?? held ?? 0)
        if (refused) throw refused
        throw err
      }
    },
    get,
    async getMany(runIds) {
      return (await runtime.read.actorsOfKind<RunContext>(runKind.kind, runIds)).map(stateOf)
    },
    async list(agentId, { accountId, limit, status, before }) {
      const named = { key: 'agentId', value: agentId }
      return (await runtime.read.pageNaming<RunContext>({ kind: runKind.kind, named, accountId, limit, status, before })).map(stateOf)
    },
    async stop(runId, accountId, waitMs) {
      const entry = await runtime.get(runId)
      if (!entry || RUN_FINAL.has(entry.status)) return get(runId)
      await runtime.enqueue(runId, accountId, { type: 'run.stop' }, `run.stop:${runId}`)
      await runtime.waitFor(runId, (e) => RUN_FINAL.has(e.status), waitMs)
      return get(runId)
    },
    async tellAgentAtEnd(agentId) {
      const run = await runtime.read.firstInStates(runKind.kind, ACTIVE, { key: 'agentId', value: agentId })
      if (!run) return false
      // Refused once the run has ended (it ended untold): the caller checks again.
      return runtime.send(run.id, { type: RUN_TELL_PARENT }).then(() => true, (err: unknown) => {
        if (err instanceof InvalidStateError || err instanceof ActorEventRefusedError) return false
        throw err
      })
    },
    async stopActive(agentId, { stoppedBy } = {}) {
      // Only a run created before the stop was committed (its effect planned): one started since
      // (a run may start on a stopped agent) is not the run the stop meant.
      const run = await runtime.read.firstInStates(runKind.kind, ACTIVE, { key: 'agentId', value: agentId }, { createdBeforeEffect: stoppedBy })
      if (!run) return null
      await runtime.enqueue(run.id, run.accountId, { type: 'run.stop' }, `run.stop:${run.id}`)
      return run.id
    },
    async scheduleFacts(accountId, agentId) {
      const f = await scheduleFactsOf(pool, runKind.kind, accountId, agentId)
      return f && { agent: f.agent, lastRunAt: f.lastRunAt, activeRun: f.activeRun, balance: { credits: f.credits, reserved: f.reserved } }
    },
  }
}

/** How a run's creation holds its first model call's credits: the ledger, and that call's worst case for a run (undefined: not held at creation). */
export type FirstCallHold = { credits: Pick<CreditsRepository, 'reserveWrite'>; creditsOf(run: RunInput): number | undefined }

/** The goal's message and the first model call's hold, as one write built from the run's first effects. */
function withFirstCallHold(hold: FirstCallHold, run: RunInput, credits: number, goal: SqlWrite) {
  return (effects: readonly NewEffect[]): SqlWrite => {
    const call = effects.find((e) => e.kind === RUN_MODEL_CALL)
    if (!call) return goal
    const reserve = hold.credits.reserveWrite({ id: heldCallIdOf(call.id), accountId: run.accountId, credits, ref: call.id })
    return mergeWrites(`${goal.name}+${reserve.name}`, [goal, reserve])
  }
}

