import type pg from 'pg'
import type { ActorRuntime } from '../../runtime/actorRuntime.ts'
import type { ApprovalOperation, ApprovalOperations } from '../../domain/approvals/ports.ts'
import { listApprovalRows } from '../../adapters/db/approvals.store.ts'
import type { WalletOpContext } from './walletOp.machine.ts'

/** A wallet operation's context read as an approval's operation (undefined when it carries none). */
function approvalOperation(id: string, accountId: string, status: string, c: WalletOpContext): ApprovalOperation | undefined {
  if (!c.approval) return undefined
  return { id, accountId, agentId: c.agentId, kind: c.kind, status, params: c.params, approval: c.approval, txHash: c.txHash, error: c.error }
}

/**
 * The approval use cases' operations over the actor runtime: an approval is its wallet
 * operation's `approval`, read from the actor; a decision is an event to that actor, so it is
 * taken only in `awaiting_approval` (else 409 `invalid_state`: it expired or was decided meanwhile).
 *
 * @example
 * const operations = createApprovalOperations({ pool, runtime })
 */
export function createApprovalOperations({ pool, runtime }: { pool: pg.Pool; runtime: ActorRuntime }): ApprovalOperations {
  const read = (entry: Awaited<ReturnType<ActorRuntime['get']>>) =>
    entry && entry.kind.kind === 'walletop' ? approvalOperation(entry.id, entry.accountId, entry.status, entry.snapshot.context as WalletOpContext) : undefined
  return {
    get: async (id) => read(await runtime.get(id)),
    async list(accountId, query) {
      const rows = await listApprovalRows(pool, accountId, query)
      return rows.flatMap((r) => approvalOperation(r.id, r.account_id, r.status, r.context as WalletOpContext) ?? [])
    },
    async decide(id, decision) {
      const op = read(await runtime.send(id, decision))
      if (!op) throw new Error(`wallet operation ${id} lost its approval`)
      return op
    },
  }
}
