import { NotFoundError, ValidationError, type FieldErrors } from '../errors.ts'
import { SHORTHAND_KINDS, type CreateAutomationBody } from './automation.schema.ts'
import type { AutomationAction, AutomationInput, AutomationKind, AutomationTrigger, OrderParams } from './automation.types.ts'
import { checkOrderTrigger, checkTwapAmount, expandOrderKind, ORDER_KINDS, orderFieldNames, type OrderKind } from './orderKinds.ts'
import type { AutomationPorts } from './ports.ts'
import { automationView } from './automationView.ts'
import { checkWebhookTrigger } from './webhookTrigger.ts'
import { checkMirror, expandMirror } from './mirrorKind.ts'

export type CreateAutomationInput = { accountId: string; automationId: string; body: CreateAutomationBody }

type Expanded = { kind: AutomationKind; trigger: AutomationTrigger; action: AutomationAction; triggerOnce: boolean; maxFirings: number | null; order?: OrderParams }
const isOrderKind = (k: string): k is OrderKind => (ORDER_KINDS as readonly string[]).includes(k)

/**
 * The contract's kinds as a trigger and an action: `dca` an interval and a swap, `limit` a
 * price threshold and a swap fired once, `sniper` a new launch and a buy of the launched token
 * (acknowledged unverified), at most `maxBuys` firings. A body with `trigger` and `action` is a
 * `custom` automation.
 */
export function expandKind(body: CreateAutomationBody): Expanded | { errors: FieldErrors } {
  const named = SHORTHAND_KINDS.filter((k) => body[k] !== undefined)
  if (body.kind && (body.trigger || body.action)) return { errors: { kind: 'Give either a kind with its parameters, or a trigger and an action.' } }
  if (!body.kind) {
    if (named.length > 0) return { errors: { kind: `Required with ${named[0]}.` } }
    if (!body.trigger || !body.action) return { errors: { ...(body.trigger ? {} : { trigger: 'Required (or a kind).' }), ...(body.action ? {} : { action: 'Required (or a kind).' }) } }
    return { kind: 'custom', trigger: body.trigger, action: body.action, triggerOnce: body.trigger_once ?? false, maxFirings: body.max_firings ?? null }
  }
  const params = body[body.kind]
  if (!params) return { errors: { [body.kind]: `Required with kind ${body.kind}.` } }
  if (named.length > 1) return { errors: { kind: 'Give the parameters of one kind only.' } }
  if (isOrderKind(body.kind)) return expandOrderKind(body, body.kind)
  if (body.kind === 'mirror') {
    const m = expandMirror(body)
    return { kind: 'mirror', trigger: m.trigger, action: m.action, triggerOnce: false, maxFirings: body.max_firings ?? null, order: { mirror: m.params } }
  }
  const swap = (args: Record<string, unknown>): AutomationAction => ({ type: 'tool_call', tool: 'swap_execute', args })
  if (body.kind === 'dca') {
    const p = body.dca!
    return {
      kind: 'dca', triggerOnce: false, maxFirings: body.max_firings ?? null,
      trigger: { type: 'interval', everySeconds: p.everySeconds, ...(p.maxRuns ? { maxRuns: p.maxRuns } : {}) },
      action: swap({ tokenIn: p.tokenIn, tokenOut: p.tokenOut, amountIn: p.amountPerRun, ...(p.slippageBps ? { slippageBps: p.slippageBps } : {}) }),
    }
  }
  if (body.kind === 'limit') {
    const p = body.limit!
    const mint = p.mint ?? (p.operator === 'lte' ? p.tokenOut : p.tokenIn)
    return {
      kind: 'limit', triggerOnce: true, maxFirings: body.max_firings ?? null,
      trigger: { type: 'price_threshold', mint, operator: p.operator, priceUsd: p.priceUsd, ...(p.expiresAt ? { expiresAt: p.expiresAt } : {}) },
      action: swap({
        tokenIn: p.tokenIn, tokenOut: p.tokenOut, amountIn: p.amountIn,
        ...(p.slippageBps ? { slippageBps: p.slippageBps } : {}), ...(p.acknowledgeUnverified ? { acknowledgeUnverified: true } : {}),
      }),
    }
  }
  const p = body.sniper!
  return {
    kind: 'sniper', triggerOnce: false, maxFirings: Math.min(p.maxBuys, body.max_firings ?? Infinity),
    trigger: { type: 'new_launch', quote: p.quote, ...(p.venue ? { venue: p.venue } : {}), ...(p.creator ? { creator: p.creator } : {}), ...(p.symbolPattern ? { symbolPattern: p.symbolPattern } : {}) },
    action: swap({ tokenIn: p.quote, amountIn: p.amountIn, acknowledgeUnverified: true, ...(p.slippageBps ? { slippageBps: p.slippageBps } : {}) }),
  }
}

/**
 * Creates an automation for one of the account's agents (404 for another's), after checking
 * everything a firing would need (checkAutomation). Every problem is named in one 422. The id
 * comes from the Idempotency-Key when one is sent: a blind retry finds the automation it created.
 *
 * @example
 * const a = await createAutomation(ports, { accountId, automationId, body: { agent_id, name: 'dca', kind: 'dca', dca: { ... } } })
 */
export async function createAutomation(deps: AutomationPorts, input: CreateAutomationInput) {
  const existing = await deps.automations.get(input.automationId)
  if (existing) {
    if (existing.accountId !== input.accountId) throw new NotFoundError('Automation')
    return automationView(existing)
  }
  await deps.automations.create(await checkAutomation(deps, input))
  return automationView((await deps.automations.get(input.automationId))!)
}

/**
 * What `createAutomation` would create, after the same checks, creating nothing: the agent, the
 * kind expanded to its trigger and action, the budgets and the first status (`armed`).
 *
 * @example
 * const preview = await previewAutomation(ports, { accountId, body: { agent_id, name: 'dca', kind: 'dca', dca: { ... } } })
 */
export async function previewAutomation(deps: AutomationPorts, input: { accountId: string; body: CreateAutomationBody }) {
  const a = await checkAutomation(deps, { ...input, automationId: '' })
  return {
    created: false, agentId: a.agentId, name: a.name, description: a.description, kind: a.kind, trigger: a.trigger, action: a.action,
    status: 'armed' as const, triggerType: a.trigger.type, actionType: a.action.type, triggerOnce: a.triggerOnce, catchUp: a.catchUp,
    maxFirings: a.maxFirings, maxSpendUsd: a.maxSpendUsd,
  }
}

/**
 * Every check of a creation, as the automation it would create: the agent is the account's
 * (404 otherwise), the tool is one the agent's skills grant (a read or trade tool) and its
 * arguments are valid, the tokens are known and differ, the interval is at least the service's
 * minimum, a price threshold is not already met (refused, so a limit order never fires on
 * creation by surprise). Every problem is named in one 422.
 */
export async function checkAutomation(deps: AutomationPorts, input: CreateAutomationInput): Promise<AutomationInput> {
  const body = input.body
  const agentId = body.agent_id ?? body.agentId
  if (!agentId) throw new ValidationError({ agent_id: 'Required: the agent the automation acts for.' })
  const agent = await deps.agents.getOwned(input.accountId, agentId)
  if (agent.status === 'deleted') throw new NotFoundError('Agent')
  const expanded = expandKind(body)
  if ('errors' in expanded) throw new ValidationError(expanded.errors)
  const mirror = expanded.order?.mirror && body.mirror ? await checkMirror(deps, input.accountId, agent.id, { ...expanded.order.mirror, leaderAgentId: body.mirror.leaderAgentId }) : undefined
  const armed = await checkOrderTrigger(deps, expanded.trigger)
  const twap = await checkTwapAmount(deps, expanded.order, expanded.action.type === 'tool_call' ? expanded.action.args.tokenIn : undefined)
  const errors = {
    ...checkTiming(deps, expanded.trigger), ...(await checkAction(deps, input.accountId, agent.skills, expanded)), ...(await checkTrigger(deps, expanded.trigger)), ...armed.errors, ...twap.errors,
    ...checkWebhookTrigger(deps, expanded), ...mirror?.errors,
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(asWritten(body, errors))
  const order = expanded.order && {
    ...expanded.order, ...(armed.priceUsd ? { armedPriceUsd: armed.priceUsd } : {}),
    ...(expanded.order.twap && twap.decimals !== undefined ? { twap: { ...expanded.order.twap, decimals: twap.decimals } } : {}),
    ...(mirror ? { mirror: mirror.params } : {}),
  }
  return {
    automationId: input.automationId, accountId: input.accountId, agentId: agent.id, name: body.name, description: body.description ?? null,
    kind: expanded.kind, trigger: expanded.trigger, action: expanded.action, triggerOnce: expanded.triggerOnce,
    catchUp: body.catch_up ?? 'once', maxFirings: expanded.maxFirings, maxSpendUsd: body.max_spend_usd ?? null,
    maxFailures: deps.limits.maxFailures, createdAt: new Date(deps.clock.now()).toISOString(), ...(order ? { order } : {}),
  }
}

/**
 * A kind's problems named as its client wrote them: `dca.amountPerRun`, not the expanded
 * `action.args.amountIn` (a limit order's default `mint` is its tokenOut or tokenIn).
 *
 * @example
 * asWritten({ kind: 'dca', ... }, { 'action.args.amountIn': 'Must be greater than 0.' }) // { 'dca.amountPerRun': ... }
 */
export function asWritten(body: CreateAutomationBody, errors: FieldErrors): FieldErrors {
  if (!body.kind) return errors
  const k = body.kind
  if (isOrderKind(k)) {
    const named = orderFieldNames(k)
    return Object.fromEntries(Object.entries(errors).map(([field, message]) => [named[field] ?? field, message]))
  }
  if (k === 'mirror') return Object.fromEntries(Object.entries(errors).map(([field, message]) => [field === 'action.args.slippageBps' ? 'mirror.slippageBps' : field, message]))
  const args = (names: string[], renamed: Record<string, string> = {}) =>
    Object.fromEntries(names.map((n) => [`action.args.${n}`, `${k}.${renamed[n] ?? n}`]))
  const trigger = (names: string[]) => Object.fromEntries(names.map((n) => [`trigger.${n}`, `${k}.${n}`]))
  const names: Record<string, string> =
    k === 'dca' ? { ...args(['tokenIn', 'tokenOut', 'amountIn', 'slippageBps'], { amountIn: 'amountPerRun' }), ...trigger(['everySeconds', 'maxRuns']) }
    : k === 'limit' ? {
        ...args(['tokenIn', 'tokenOut', 'amountIn', 'slippageBps', 'acknowledgeUnverified']), ...trigger(['priceUsd', 'operator', 'expiresAt']),
        'trigger.mint': body.limit?.mint ? 'limit.mint' : body.limit?.operator === 'lte' ? 'limit.tokenOut' : 'limit.tokenIn',
      }
    : { ...args(['tokenIn', 'amountIn', 'slippageBps'], { tokenIn: 'quote' }), ...trigger(['venue', 'creator', 'symbolPattern']) }
  return Object.fromEntries(Object.entries(errors).map(([field, message]) => [names[field] ?? field, message]))
}

/** The interval's minimum, and times that are in the future where they must be. */
export function checkTiming(deps: Pick<AutomationPorts, 'limits' | 'clock'>, t: AutomationTrigger): FieldErrors {
  const errors: FieldErrors = {}
  const now = deps.clock.now()
  if (t.type === 'interval' && t.everySeconds < deps.limits.minIntervalSeconds) errors['trigger.everySeconds'] = `At least ${deps.limits.minIntervalSeconds} seconds (AUTOMATION_MIN_INTERVAL_SECONDS).`
  if (t.type === 'interval' && t.endAt && Date.parse(t.endAt) <= Math.max(now, Date.parse(t.startAt ?? '') || 0)) errors['trigger.endAt'] = 'Must be after now and after startAt.'
  if (t.type === 'schedule' && Date.parse(t.scheduledAt) <= now) errors['trigger.scheduledAt'] = 'Must be in the future.'
  if (t.type === 'price_threshold' && t.expiresAt && Date.parse(t.expiresAt) <= now) errors['trigger.expiresAt'] = 'Must be in the future.'
  return errors
}

/** The tool is granted and its arguments valid; a swap's tokens are known and differ. */
export async function checkAction(deps: AutomationPorts, accountId: string, skills: string[], e: Pick<Expanded, 'trigger' | 'action' | 'order'>): Promise<FieldErrors> {
  if (e.action.type !== 'tool_call') return {}
  const granted = await deps.tools.granted(accountId, skills)
  if (!granted.includes(e.action.tool)) return { 'action.tool': `Not a tool this agent's skills grant (read and trade tools only): ${e.action.tool}.` }
  // A sniper's swap names its token when the launch comes: its arguments are checked with a stand-in.
  const fromLaunch = e.trigger.type === 'new_launch' && e.action.args.tokenOut === undefined
  // A mirror's swap takes its tokens and amount from the leader's swap: stand-ins for all three.
  const fromLeader = e.trigger.type === 'leader_swap'
  // An order's amount is worked out when it fires (a share of the holding, a TWAP's slice): a stand-in too.
  const standIn = {
    ...(fromLaunch ? { tokenOut: `0x${'1'.repeat(40)}` } : {}), ...(e.order ? { amountIn: e.order.twap?.amountIn ?? '1' } : {}),
    ...(fromLeader ? { tokenIn: 'ETH', tokenOut: 'USDC' } : {}),
  }
  const args = { ...e.action.args, ...standIn }
  const argErrors = deps.tools.check(e.action.tool, args)
  const errors: FieldErrors = {}
  for (const [k, v] of Object.entries(argErrors ?? {})) errors[`action.args.${k}`] = v
  if (!fromLaunch && !fromLeader && (e.action.tool === 'swap_execute' || e.action.tool === 'swap_quote')) {
    for (const side of ['tokenIn', 'tokenOut'] as const) {
      const ref = e.action.args[side]
      if (typeof ref === 'string' && !errors[`action.args.${side}`] && !(await deps.tokens.resolve(ref))) errors[`action.args.${side}`] = `Unknown token: ${ref}.`
    }
    const [a, b] = [e.action.args.tokenIn, e.action.args.tokenOut]
    if (typeof a === 'string' && typeof b === 'string') {
      const [ra, rb] = await Promise.all([deps.tokens.resolve(a), deps.tokens.resolve(b)])
      if (ra && rb && ra.address === rb.address) errors['action.args.tokenOut'] = 'Must differ from tokenIn.'
    }
  }
  return errors
}

/** A price threshold's token is known and the threshold not already met. */
export async function checkTrigger(deps: AutomationPorts, t: AutomationTrigger): Promise<FieldErrors> {
  if (t.type !== 'price_threshold') return {}
  if (!(await deps.tokens.resolve(t.mint))) return { 'trigger.mint': `Unknown token: ${t.mint}.` }
  const price = await deps.tokens.priceUsd(t.mint)
  if (price === null) return { 'trigger.mint': `No price for ${t.mint} now.` }
  const met = t.operator === 'gte' ? Number(price) >= Number(t.priceUsd) : Number(price) <= Number(t.priceUsd)
  return met ? { 'trigger.priceUsd': `Already met: ${t.mint} is ${price} USD now. A threshold must be crossed after creation.` } : {}
}
