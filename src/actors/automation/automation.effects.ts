import type { Bound } from '../../domain/util/bound.ts'
import type { getAgent } from '../../domain/agents/getAgent.ts'
import type { startRun } from '../../domain/runs/startRun.ts'
import type { ToolPort } from '../../domain/toolCall.types.ts'
import type { AutomationAction, FiringSource } from '../../domain/automations/automation.types.ts'
import { stableUuid } from '../../domain/util/stableUuid.ts'
import { inToolSpan } from '../../adapters/telemetry/spans.ts'
import { releaseUnstartedOf } from '../conversation/toolCall.effects.ts'
import type { AutomationsStore } from '../../adapters/db/automations.store.ts'
import type { EffectContext, EffectHandler, EffectRow } from '../runtime/index.ts'
import { AUTOMATION_FIRE, type AutomationContext, type FireParams } from './automation.machine.ts'
import { AUTOMATIONS_WAITING, LISTED } from '../agent/agent.machine.ts'
import { enqueue } from '../runtime/index.ts'
import { orderArgs, type OrderCalls } from './orderArgs.ts'

/** The core's use cases a firing calls (the core is built after the runtime, so handed in as a getter). */
export type AutomationCalls = OrderCalls & {
  getAgent: Bound<typeof getAgent>
  startRun: Bound<typeof startRun>
  agentTools(input: { accountId: string; skills: readonly string[] }): Promise<string[]>
  activeListingOf(input: { accountId: string; agentId: string }): Promise<string | null>
}
type AutomationEffectsDeps = { core(): AutomationCalls; tools: ToolPort; store: AutomationsStore }

/**
 * The arguments of a firing's tool call: the action's own, for a firing of a new launch (a
 * sniper) the launched token as `tokenOut` when the action names none, acknowledged as
 * unverified, and for a signal webhook's the values its body set.
 */
export function firingArgs(action: Extract<AutomationAction, { type: 'tool_call' }>, source: FiringSource): Record<string, unknown> {
  // A signal webhook's values (checked against the trigger's `values` when it came) set their arguments.
  if (source.source === 'webhook') return { ...action.args, ...source.values }
  if (source.source !== 'launch' || action.args.tokenOut !== undefined) return action.args
  return { ...action.args, tokenOut: source.token.address, acknowledgeUnverified: true }
}

/**
 * The firing effect: only while the agent is `running` (else `fire.skipped`), the action runs
 * through the same registry and use cases as a model's tool call, under the agent's policy and
 * the tools its skills grant. The call id is (automation, firing number): a retried effect finds
 * the swap it started and sends nothing new, so each firing moves funds at most once. What an
 * earlier attempt started is looked for first, by its derived id: it is the firing's, even when
 * the agent stopped or a PATCH changed the action since (its swap may be on chain). A
 * fund-moving tool starts its operation as the automation's child (`fire.started`); the
 * automation hears its end. `agent_prompt` starts a run under an id derived the same way, naming
 * the automation: the run's swaps and transfers count against its `max_spend_usd`, and once that
 * is spent no run is started (the firing fails `automation_budget_exhausted`, which completes
 * the automation). The run stays
 * its agent's child (the agent's schedule hears its end) and names the automation as a watcher:
 * the automation hears its end too, and the firing ends with it (ok when the run completed or
 * was stopped, failed with its status otherwise).
 */
export function createAutomationEffects(deps: AutomationEffectsDeps): Record<string, EffectHandler> {
  // The firing's key: the call id its operation's id derives from (the automation is the effect's actor); a TWAP's, its slice; a mirror's, the leader's swap.
  const firingKeyOf = (effect: EffectRow) => {
    const p = effect.params as FireParams
    if (p.source.source === 'leader_swap') return `automation:${effect.actorId}:leader:${p.source.swap.id}`
    return p.slice ? `automation:${effect.actorId}:slice:${p.slice}` : `automation:${effect.actorId}:${p.number}`
  }
  const handler: EffectHandler = async (effect, ctx) => {
    const a = await ctx.context<AutomationContext>()
    const firingKey = firingKeyOf(effect)
    const event = await fire(deps, effect, ctx, a, firingKey)
    // A firing of a fund-moving tool that started nothing gives back what an earlier attempt of it reserved for its operation.
    if (event.type !== 'fire.started' && a.action.type === 'tool_call' && deps.tools.find(a.action.tool)?.movesFunds) ctx.finishWith(releaseUnstartedOf(deps.tools, a.accountId, firingKey))
    return event
  }
  handler.giveUp = (effect) => releaseUnstartedOf(deps.tools, effect.accountId, firingKeyOf(effect))
  return { [AUTOMATION_FIRE]: handler }
}

/** One firing: what it started (`fire.started`), did, skipped or why it failed. */
async function fire(
  { core, tools, store }: AutomationEffectsDeps,
  effect: EffectRow,
  ctx: EffectContext,
  a: AutomationContext,
  firingKey: string,
): Promise<{ type: string } & Record<string, unknown>> {
  const params = effect.params as FireParams
  const { source } = params
  const c = core()
  const runId = stableUuid(a.accountId, 'automation/run', firingKey)
  // What an earlier run of this firing started (its ids are derived from the firing): none can
  // have begun when this is the effect's first run, so the look is skipped then (a child created
  // twice would still be refused by its id, and the retry would find it).
  const started = effect.firstRun ? undefined : await store.startedAmong([runId, ...tools.operationIdsOf(a.accountId, firingKey)])
  // The firing's run: its end (heard as the automation is the run's watcher) is the firing's outcome.
  if (started?.id === runId) return { type: 'fire.started', childId: runId, result: { runId, status: started.status } }
  if (started) return { type: 'fire.started', childId: started.id, result: { id: started.id, status: started.status } }
  const agent = await c.getAgent({ accountId: a.accountId, agentId: a.agentId }).catch(() => undefined)
  if (!agent || agent.status !== 'running') {
    // A listed agent is paused for its listing: the firing names it, as every refused money move does.
    const listingId = agent?.statusReason === LISTED ? await c.activeListingOf({ accountId: a.accountId, agentId: a.agentId }) : null
    const why = listingId ? `paused: listed on the market (listing ${listingId})` : (agent?.status ?? 'gone')
    // The automation waits for the agent to run again (a timed one): the agent hears it, to tell it at its next start (or now, if it started meanwhile).
    if (agent) {
      const waits = { actorId: a.agentId, accountId: a.accountId, event: { type: AUTOMATIONS_WAITING }, dedupeKey: `automation-waits:${firingKey}` }
      ctx.finishWith((tx) => enqueue(tx, waits).then(() => {}))
    }
    return { type: 'fire.skipped', reason: `agent_not_running: the agent is ${why}` }
  }
  if (a.action.type === 'agent_prompt') {
    // A spent budget starts no run (whose every move would be refused): the automation completes.
    const spent = a.maxSpendUsd ? await store.spentBudgetRefusal(a.automationId) : null
    if (spent) return { type: 'fire.failed', code: 'automation_budget_exhausted', reason: spent }
    try {
      const run = await c.startRun({ accountId: a.accountId, agentId: a.agentId, runId, request: { goal: a.action.prompt }, trigger: 'automation', automationId: a.automationId })
      return { type: 'fire.started', childId: run.id, result: { runId: run.id, status: run.status } }
    } catch (err) {
      const e = err as { code?: string; message?: string; status?: number }
      if (!e.code || (e.status ?? 500) >= 500) throw err
      return { type: 'fire.failed', code: e.code, reason: e.message ?? 'refused' }
    }
  }
  const tool = tools.find(a.action.tool)
  const granted = await c.agentTools({ accountId: a.accountId, skills: agent.skills })
  if (!tool || !granted.includes(tool.name)) return { type: 'fire.failed', code: 'tool_not_granted', reason: `The agent's skills do not grant ${a.action.tool}.` }
  const args = await orderArgs(c, a, params, firingArgs(a.action, source))
  if (!('args' in args)) return args
  let childId: string | undefined
  const outcome = await inToolSpan(tool.name, firingKey, () => tools.call(tool.name, args.args, {
    accountId: a.accountId, agentId: a.agentId, callId: firingKey,
    parent: { actorId: effect.actorId, started: (id) => void (childId = id) },
  }))
  if (!outcome.ok) return { type: 'fire.failed', code: outcome.error.code, reason: outcome.error.error }
  if (childId) return { type: 'fire.started', childId, result: outcome.result }
  return { type: 'fire.done', result: outcome.result }
}
