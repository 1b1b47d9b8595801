import type { ActorRuntime } from '../runtime/index.ts'
import type { ApprovalOperation, ApprovalOperations } from '../../domain/approvals/ports.ts'
import type { LaunchContext } from '../../domain/launches/ports.ts'
import type { WalletOpContext } from './walletOp.machine.ts'

/**
 * An actor's context read as an approval's operation (undefined when it carries none): a wallet
 * operation's own, or a launch's (kind `launch`, its request as `params`).
 */
function approvalOperation(id: string, actorKind: string, accountId: string, status: string, context: unknown, parentId?: string | null): ApprovalOperation | undefined {
  if (actorKind === 'launch') {
    const c = context as LaunchContext
    if (!c.approval) return undefined
    const params = { venue: c.venue, symbol: c.symbol, name: c.name, quote: c.quote, seedAmount: c.seedAmount }
    return { id, accountId, agentId: c.agentId, kind: 'launch', status, params, approval: c.approval, txHash: c.txHash, error: c.error, parentId, policy: c.policy }
  }
  if (actorKind !== 'walletop') return undefined
  const c = context as WalletOpContext
  if (!c.approval) return undefined
  return { id, accountId, agentId: c.agentId, kind: c.kind, status, params: c.params, approval: c.approval, txHash: c.txHash, error: c.error, parentId, policy: c.policy }
}

/**
 * The kinds that carry an approval, read newest request first (the partial index `actor_approval`,
 * Migration20261128030000_launch_approvals, is on these kinds and that order).
 */
const APPROVAL_KINDS = ['walletop', 'launch']

/**
 * The approval use cases' operations over the actor runtime: an approval is its wallet
 * operation's (or launch's) `approval`, read from the actor; a decision is an event to that
 * actor, so it is taken only in `awaiting_approval` (else 409 `invalid_state`: it expired or was
 * decided meanwhile).
 *
 * @example
 * const operations = createApprovalOperations({ runtime })
 */
export function createApprovalOperations({ runtime }: { runtime: ActorRuntime }): ApprovalOperations {
  const read = (entry: Awaited<ReturnType<ActorRuntime['get']>>) =>
    entry ? approvalOperation(entry.id, entry.kind.kind, entry.accountId, entry.status, entry.snapshot.context, entry.parentId) : undefined
  return {
    get: async (id) => read(await runtime.get(id)),
    async list(accountId, query) {
      const rows = await runtime.read.actorsCarrying({
        accountId,
        kinds: APPROVAL_KINDS,
        carrying: ['approval'],
        equal: [{ path: ['approval', 'status'], value: query.status }, { path: ['agentId'], value: query.agentId }],
        orderBy: ['approval', 'requestedAt'],
        after: query.after,
        limit: query.limit,
      })
      return rows.flatMap((r) => approvalOperation(r.id, r.kind, r.accountId, r.status, r.context) ?? [])
    },
    async decide(id, decision) {
      const op = read(await runtime.send(id, decision))
      if (!op) throw new Error(`operation ${id} lost its approval`)
      return op
    },
  }
}
