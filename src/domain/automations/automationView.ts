import type { AutomationState } from './ports.ts'
import { orderView } from './orderView.ts'

/**
 * An automation as the API answers it: what it is (kind, trigger, action, budgets), its status,
 * its counters and times, and its last firings (number, time, outcome, tx hash or reason).
 */
export function automationView(a: AutomationState) {
  return {
    id: a.automationId,
    agentId: a.agentId,
    name: a.name,
    description: a.description,
    kind: a.kind,
    trigger: a.trigger,
    action: a.action,
    status: a.status,
    triggerType: a.trigger.type,
    actionType: a.action.type,
    triggerOnce: a.triggerOnce,
    catchUp: a.catchUp,
    maxFirings: a.maxFirings,
    maxSpendUsd: a.maxSpendUsd,
    runCount: a.runCount,
    lastTriggeredAt: a.lastTriggeredAt,
    nextRunAt: a.status === 'armed' && !a.suspended ? a.nextRunAt : null,
    /** The agent was not running when a firing was due: the automation waits for it to start. */
    suspended: a.suspended,
    lastError: a.lastError,
    completedReason: a.completedReason,
    firings: [...a.firings].reverse(),
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    // What a protective or sliced order waits for (level, high, its sides, slices done and left).
    ...orderView(a),
  }
}
export type AutomationView = ReturnType<typeof automationView>
