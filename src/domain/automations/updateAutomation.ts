import { ValidationError, type FieldErrors } from '../errors.ts'
import type { UpdateAutomationBody } from './automation.schema.ts'
import type { AutomationChanges } from './automation.types.ts'
import { automationView } from './automationView.ts'
import { checkTiming } from './createAutomation.ts'
import type { AutomationPorts } from './ports.ts'
import { ownAutomation } from './readAutomations.ts'

/**
 * Changes an automation: `status: "paused"` pauses it (a firing in flight ends first),
 * `status: "armed"` resumes it from `paused` or re-arms it from `error`; a new name,
 * description, trigger, action or budget takes effect from the next firing (a new trigger's
 * timer is set at once). A completed or cancelled automation refuses with 409. A tool the
 * agent's skills do not grant, or an interval under the minimum, is a 422 as at creation.
 *
 * @example
 * const a = await updateAutomation(ports, { accountId, automationId, body: { status: 'paused' } })
 */
export async function updateAutomation(deps: AutomationPorts, input: { accountId: string; automationId: string; body: UpdateAutomationBody }) {
  const current = await ownAutomation(deps, input.accountId, input.automationId)
  const b = input.body
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
  const errors: FieldErrors = b.trigger ? checkTiming(deps, b.trigger) : {}
  if (b.action?.type === 'tool_call') {
    const agent = await deps.agents.getOwned(input.accountId, current.agentId)
    if (!(await deps.tools.granted(input.accountId, agent.skills)).includes(b.action.tool)) errors['action.tool'] = `Not a tool this agent's skills grant: ${b.action.tool}.`
    for (const [k, v] of Object.entries(deps.tools.check(b.action.tool, b.action.args) ?? {})) errors[`action.args.${k}`] = v
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
  let state = current
  if (Object.keys(changes).length > 0) state = await deps.automations.send(current.automationId, { type: 'automation.update', changes })
  if (b.status === 'paused' && state.status !== 'paused') state = await deps.automations.send(current.automationId, { type: 'automation.pause' })
  if (b.status === 'armed' && (state.status === 'paused' || state.status === 'error')) state = await deps.automations.send(current.automationId, { type: 'automation.resume' })
  return automationView(state)
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
