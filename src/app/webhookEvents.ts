import type { AccountEventRow } from '../adapters/db/webhooks.store.ts'
import type { Core } from './coreApi.ts'

/**
 * An event's `data`: the resource as its GET answers it, with the status the event is about (it
 * may have moved on since); undefined when there is no such read (the event's record is used).
 */
export function renderEventWith(core: Core) {
  return async (e: AccountEventRow): Promise<unknown> => {
    const accountId = e.account_id
    const id = e.resource_id ?? ''
    const d = e.detail
    const status = { status: d.status }
    switch (e.resource_kind) {
      case 'walletop':
        if (d.kind === 'swap') return { ...(await core.getSwap({ accountId, swapId: id })), ...status }
        return { id, agentId: d.agentId, status: d.status, txHash: d.txHash ?? null, ...(d.result as object | null ?? {}), error: d.error ?? null }
      case 'launch':
        return { ...(await core.getLaunch({ accountId, launchId: id })), ...status }
      case 'run':
        return { ...(await core.getRun({ accountId, runId: id })), ...status }
      case 'automation':
        return { ...(await core.getAutomation({ accountId, automationId: id })), ...status }
      case 'agent':
        return { ...(await core.getAgent({ accountId, agentId: id })), ...status, pausedReason: d.reason ?? null }
      case 'approval':
        // The approval as it stood then (`pending` for approval.requested), its operation as it stands now.
        return { ...(await core.getApproval({ accountId, approvalId: id })), status: (d.approval as { status?: string } | null)?.status }
      case 'chatturn':
        if (typeof d.agentId === 'string') return { ...(await core.getChatTurn({ accountId, agentId: d.agentId, turnId: id })), ...status }
        return undefined
      default:
        return undefined
    }
  }
}

/**
 * The data of a batch of events (see renderEventWith), in order: the runs among them read in one
 * statement; each other one rendered on its own. An event whose read fails is undefined (its record is used).
 */
export function renderEventsWith(core: Core, logger: { warn(o: object, m: string): void }) {
  const one = renderEventWith(core)
  return async (events: readonly AccountEventRow[]): Promise<unknown[]> => {
    const runRefs = events.filter((e) => e.resource_kind === 'run' && e.resource_id).map((e) => ({ accountId: e.account_id, runId: e.resource_id! }))
    const runs = runRefs.length > 1 ? await core.getRuns({ refs: runRefs }).catch(() => undefined) : undefined
    const out: unknown[] = []
    for (const e of events) {
      const run = e.resource_kind === 'run' ? runs?.get(e.resource_id ?? '') : undefined
      if (run) {
        out.push({ ...run, status: e.detail.status })
        continue
      }
      out.push(await one(e).catch((err: unknown) => {
        logger.warn({ err, eventId: e.id }, 'webhook event rendered from its record')
        return undefined
      }))
    }
    return out
  }
}
