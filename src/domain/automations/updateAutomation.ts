import { InvalidStateError, ValidationError, type FieldErrors } from '../errors.ts'
import type { UpdateAutomationBody } from './automation.schema.ts'
import type { AutomationChanges } from './automation.types.ts'
import { automationView } from './automationView.ts'
import { checkAction, checkTiming, checkTrigger } from './createAutomation.ts'
import type { AutomationPorts, AutomationState } from './ports.ts'
import { ownAutomation } from './readAutomations.ts'

/**
 * Changes an automation: `status: "paused"` pauses it (a firing in flight ends first),
 * `status: "armed"` resumes it from `paused` or re-arms it from `error`; a new name,
 * description, trigger, action or budget takes effect from the next firing (a new trigger's
 * timer is set at once). A completed or cancelled automation refuses with 409. A new trigger
 * or action gets every check of a creation (the tool granted, its tokens known and different,
 * the interval's minimum, a threshold not already met): 422 naming each.
 *
 * @example
 * const a = await updateAutomation(ports, { accountId, automationId, body: { status: 'paused' } })
 */
export async function updateAutomation(deps: AutomationPorts, input: { accountId: string; automationId: string; body: UpdateAutomationBody }) {
  const { current, changes } = await checkUpdate(deps, input)
  const b = input.body
  let state = current
  if (Object.keys(changes).length > 0) state = await deps.automations.send(current.automationId, { type: 'automation.update', changes })
  if (b.status === 'paused' && state.status !== 'paused') state = await deps.automations.send(current.automationId, { type: 'automation.pause' })
  if (b.status === 'armed' && (state.status === 'paused' || state.status === 'error')) state = await deps.automations.send(current.automationId, { type: 'automation.resume' })
  return automationView(state)
}

/**
 * What `updateAutomation` would do, after the same checks, changing nothing: the automation as
 * it stands, the parameters that would change and the status asked for.
 *
 * @example
 * const preview = await previewUpdateAutomation(ports, { accountId, automationId, body: { max_spend_usd: '50' } })
 */
export async function previewUpdateAutomation(deps: AutomationPorts, input: { accountId: string; automationId: string; body: UpdateAutomationBody }) {
  const { current, changes } = await checkUpdate(deps, input)
  return { updated: false, automation: automationView(current), changes, ...(input.body.status ? { status: input.body.status } : {}) }
}

/** The account's automation and the changes a PATCH asks for, checked as at creation (422 naming each bad field). */
async function checkUpdate(deps: AutomationPorts, input: { accountId: string; automationId: string; body: UpdateAutomationBody }): Promise<{ current: AutomationState; changes: AutomationChanges }> {
  const current = await ownAutomation(deps, input.accountId, input.automationId)
  const b = input.body
  // A protective or sliced order's trigger and action are its kind's (a TWAP's slices, a bracket's sides): changed, it would be another order.
  if (current.order) {
    const fixed = (['trigger', 'action', 'trigger_once'] as const).filter((k) => b[k] !== undefined)
    if (fixed.length > 0) throw new ValidationError(Object.fromEntries(fixed.map((k) => [k, `A ${current.kind} keeps the ${k} of its kind: cancel it and create another.`])))
  }
  const changes: AutomationChanges = {
    ...(b.name !== undefined ? { name: b.name } : {}),
    ...(b.description !== undefined ? { description: b.description } : {}),
    ...(b.trigger ? { trigger: b.trigger } : {}),
    ...(b.action ? { action: b.action } : {}),
    ...(b.trigger_once !== undefined ? { triggerOnce: b.trigger_once } : {}),
    ...(b.catch_up ? { catchUp: b.catch_up } : {}),
    ...(b.max_firings !== undefined ? { maxFirings: b.max_firings } : {}),
    ...(b.max_spend_usd !== undefined ? { maxSpendUsd: b.max_spend_usd } : {}),
  }
  // The checks of a creation, on the automation as it would stand after the change.
  const errors: FieldErrors = b.trigger ? { ...checkTiming(deps, b.trigger), ...(await checkTrigger(deps, b.trigger)) } : {}
  if (b.action || b.trigger) {
    const agent = await deps.agents.getOwned(input.accountId, current.agentId)
    Object.assign(errors, await checkAction(deps, input.accountId, agent.skills, { trigger: b.trigger ?? current.trigger, action: b.action ?? current.action }))
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
  return { current, changes }
}

/**
 * Cancels an automation (`DELETE /automations/:id`): it fires no more; a firing in flight ends
 * first and is recorded. Answers the automation as it then stands. Cancelling a cancelled one
 * answers it again; a completed one refuses with 409.
 */
export async function cancelAutomation(deps: AutomationPorts, input: { accountId: string; automationId: string }) {
  const current = await ownAutomation(deps, input.accountId, input.automationId)
  if (current.status === 'cancelled') return automationView(current)
  return automationView(await deps.automations.send(current.automationId, { type: 'automation.cancel' }))
}

/**
 * Fires an automation now, once (`POST /automations/:id/trigger`): while a firing runs it waits
 * and fires after it (a few may wait; more are refused with 409), as does a paused, completed or
 * cancelled automation (409). The firing's action runs as any other (agent running, policy, budget).
 */
export async function triggerAutomation(deps: AutomationPorts, input: { accountId: string; automationId: string }) {
  const current = await ownAutomation(deps, input.accountId, input.automationId)
  return automationView(await deps.automations.send(current.automationId, { type: 'automation.trigger', source: { source: 'manual' } }))
}

/**
 * What `triggerAutomation` would do, firing nothing: the automation and the action a firing
 * runs. A paused, completed or cancelled automation refuses with 409 as the trigger would.
 *
 * @example
 * const preview = await previewTriggerAutomation(ports, { accountId, automationId })
 */
export async function previewTriggerAutomation(deps: AutomationPorts, input: { accountId: string; automationId: string }) {
  const current = await ownAutomation(deps, input.accountId, input.automationId)
  if (current.status !== 'armed' && current.status !== 'executing') throw new InvalidStateError({ event: 'trigger', state: current.status })
  return { triggered: false, automation: automationView(current), action: current.action }
}
