import { InvalidStateError, NotFoundError, ServiceError } from '../errors.ts'
import type { AuditActor } from '../agents/auditTrail.ts'
import type { OpsOperator, OpsPorts } from './ports.ts'

/** The type a stored event names (what a retry would send), null when it names none. */
const eventTypeOf = (event: unknown): string | null => {
  const type = (event as { type?: unknown } | null)?.type
  return typeof type === 'string' ? type : null
}

const notFound = (what: string): never => {
  throw new NotFoundError(what)
}

export type ResolveDeadLetterDeps = Pick<OpsPorts, 'runtime' | 'store'>
export type ResolveDeadLetterInput = { seq: number; resolution: 'retried' | 'discarded'; operator: OpsOperator; reason: string }

/**
 * Retries or discards a dead letter, audited in the same transaction (a retry's event is enqueued
 * again and processed). A retry of an event its actor's kind lists as unsafe to replay (it would
 * start a fund-moving effect whose policy check ran at the request) is refused: 409
 * `retry_moves_funds`, nothing written; discard it, and let the owner ask again.
 *
 * @example
 * await resolveDeadLetter(deps, { seq, resolution: 'retried', operator, reason: 'parser fixed in 1.4' })
 */
export async function resolveDeadLetter({ runtime, store }: ResolveDeadLetterDeps, { seq, resolution, operator, reason }: ResolveDeadLetterInput) {
  if (resolution === 'retried') {
    const open = (await runtime.inspect.openDeadLetter(seq)) ?? notFound('Dead letter')
    const type = eventTypeOf(open.event)
    if (type !== null && runtime.inspect.unsafeToReplay(open.kind, type)) {
      throw new ServiceError(
        `A retry of ${type} would start a ${open.kind} that moves funds under the policy checked when it was requested, not today's; discard it instead, and have the owner ask again.`,
        { code: 'retry_moves_funds', status: 409 },
      )
    }
  }
  const done = (await runtime.admin.resolveDeadLetter({ seq, resolution }, (tx, dead) => store.writeAudit({
    accountId: dead.accountId, subjectId: dead.actorId, action: `ops.deadletter.${resolution === 'retried' ? 'retry' : 'discard'}`,
    operator, reason, before: { seq, event: dead.event, error: dead.error }, after: { seq, resolution },
  }, tx))) ?? notFound('Dead letter')
  return { seq: done.seq, actorId: done.actorId, resolution: done.resolution }
}

export type UnstickActorDeps = Pick<OpsPorts, 'runtime' | 'store'>

/** Clears a stuck mark, audited with the mark it had: 404 for an unknown actor, 409 for one that is not stuck. */
export async function unstickActor({ runtime, store }: UnstickActorDeps, { actorId, operator, reason }: { actorId: string; operator: OpsOperator; reason: string }) {
  const done = await runtime.admin.clearStuck(actorId, (tx, old) => store.writeAudit({
    accountId: old.accountId, subjectId: actorId, action: 'ops.actor.unstick', operator, reason,
    before: { stuckReason: old.stuckReason, stuckAt: old.stuckAt }, after: { stuck: false },
  }, tx))
  if (!done) {
    if (!(await runtime.inspect.owner(actorId))) notFound('Actor')
    throw new InvalidStateError({ event: 'unstick', state: 'not stuck' })
  }
  return { actorId, stuck: false, stuckReason: done.stuckReason ?? '' }
}

export type PauseAgentDeps = Pick<OpsPorts, 'runtime' | 'store' | 'features'>

/** The kill switch: the agent's policy `paused`, through the same use case as PATCH /agents/:id (tightening: at once), audited with the reason. */
export async function pauseAgent({ runtime, store, features }: PauseAgentDeps, { agentId, actor, operator, reason }: { agentId: string; actor: AuditActor; operator: OpsOperator; reason: string }) {
  const { accountId } = (await runtime.inspect.owner(agentId, 'agent')) ?? notFound('Agent')
  const before = await features.getAgent({ accountId, agentId })
  const agent = await features.updateAgent({ accountId, agentId, actor, policy: { paused: true } })
  await store.writeAudit({
    accountId, subjectId: agentId, action: 'ops.agent.pause', operator, reason,
    before: { paused: before.policy.paused }, after: { paused: agent.policy.paused },
  })
  return agent
}

export type CancelRunDeps = Pick<OpsPorts, 'runtime' | 'store' | 'features'>

/** Cancels a run through the stop use case (nothing new starts, what is in flight completes), audited with the reason. */
export async function cancelRun({ runtime, store, features }: CancelRunDeps, { runId, operator, reason }: { runId: string; operator: OpsOperator; reason: string }) {
  const owner = (await runtime.inspect.owner(runId, 'run')) ?? notFound('Run')
  const run = await features.stopRun({ accountId: owner.accountId, runId })
  await store.writeAudit({
    accountId: owner.accountId, subjectId: runId, action: 'ops.run.cancel', operator, reason,
    before: { status: owner.status }, after: { status: run.status },
  })
  return run
}

export type SetTokenVerifiedDeps = Pick<OpsPorts, 'store'>

/** Operators vouch for a launched token (swaps then need no acknowledgement for it); 404 for an unknown address. */
export async function setTokenVerified({ store }: SetTokenVerifiedDeps, input: { address: string; verified: boolean; accountId: string; actor: AuditActor }) {
  return (await store.setTokenVerified(input)) ?? notFound('Token')
}
