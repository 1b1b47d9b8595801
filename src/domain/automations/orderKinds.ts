import type { FieldErrors } from '../errors.ts'
import type { CreateAutomationBody } from './automation.schema.ts'
import type { AutomationAction, AutomationKind, AutomationTrigger, OrderParams } from './automation.types.ts'
import type { AutomationPorts } from './ports.ts'
import { bracketSide, trailingStopLevel, twapEverySeconds } from './orderRules.ts'

/** The protective orders among the automation kinds (AUTOMATION_KINDS). */
export const ORDER_KINDS = ['stop_loss', 'take_profit', 'trailing_stop', 'bracket', 'twap'] as const satisfies readonly AutomationKind[]
export type OrderKind = (typeof ORDER_KINDS)[number]

export type ExpandedOrder = { kind: OrderKind; trigger: AutomationTrigger; action: AutomationAction; triggerOnce: boolean; maxFirings: number | null; order: OrderParams }

const swap = (args: Record<string, unknown>): AutomationAction => ({ type: 'tool_call', tool: 'swap_execute', args })
const opt = <T>(name: string, v: T | undefined) => (v === undefined ? {} : { [name]: v })

/**
 * The protective and sliced kinds as a trigger and an action. A protective order (`stop_loss`,
 * `take_profit`, `trailing_stop`, `bracket`) fires once: a swap of `share` (default 1) of the
 * holding of `token`, read when it fires, into `quoteOut` (default USDC). `stop_loss` and
 * `take_profit` are a `price_threshold` on the token (`lte`, `gte`); a trailing stop and a
 * bracket have triggers of their own, decided by the machine from each block's price. A `twap` is
 * an interval of `slices` firings, one every `overSeconds / slices` seconds (whole seconds, the
 * first at once), each swapping its slice of `amountIn`. The swap's `amountIn` is left out of
 * the action: the firing works it out (the holding's share, the slice).
 */
export function expandOrderKind(body: CreateAutomationBody, kind: OrderKind): ExpandedOrder | { errors: FieldErrors } {
  const maxFirings = body.max_firings ?? null
  if (kind === 'twap') {
    const p = body.twap!
    return {
      kind, triggerOnce: false, maxFirings,
      trigger: { type: 'interval', everySeconds: twapEverySeconds(p.overSeconds, p.slices), maxRuns: p.slices },
      action: swap({ tokenIn: p.tokenIn, tokenOut: p.tokenOut, ...opt('slippageBps', p.slippageBps), ...opt('acknowledgeUnverified', p.acknowledgeUnverified || undefined) }),
      order: { twap: { amountIn: p.amountIn, slices: p.slices, maxPriceImpactBps: p.maxPriceImpactBps } },
    }
  }
  const p = body[kind]!
  const action = swap({ tokenIn: p.token, tokenOut: p.quoteOut ?? 'USDC', ...opt('slippageBps', p.slippageBps), ...opt('acknowledgeUnverified', p.acknowledgeUnverified || undefined) })
  const order = { share: p.share ?? 1 }
  const once = { kind, triggerOnce: true, maxFirings, action, order }
  if (kind === 'stop_loss' || kind === 'take_profit') {
    const { priceUsd } = body[kind]!
    return { ...once, trigger: { type: 'price_threshold', mint: p.token, operator: kind === 'stop_loss' ? 'lte' : 'gte', priceUsd } }
  }
  if (kind === 'trailing_stop') {
    const t = body.trailing_stop!
    if ((t.trailPct === undefined) === (t.trailUsd === undefined)) return { errors: { 'trailing_stop.trailPct': 'Give one of trailPct or trailUsd.' } }
    return { ...once, trigger: { type: 'trailing_stop', mint: p.token, ...opt('trailPct', t.trailPct), ...opt('trailUsd', t.trailUsd) } }
  }
  const b = body.bracket!
  if (Number(b.takeProfitUsd) <= Number(b.stopLossUsd)) return { errors: { 'bracket.takeProfitUsd': 'Must be above stopLossUsd.' } }
  return { ...once, trigger: { type: 'bracket', mint: p.token, takeProfitUsd: b.takeProfitUsd, stopLossUsd: b.stopLossUsd } }
}

/**
 * A trailing stop's or a bracket's price now: the token is known and priced, and the order is
 * not already met (a trailing stop's level is under the price; the price is between a bracket's
 * two levels). Answers the price (a trailing stop's first high) and the problems.
 */
export async function checkOrderTrigger(deps: Pick<AutomationPorts, 'tokens'>, t: AutomationTrigger): Promise<{ errors: FieldErrors; priceUsd?: string }> {
  if (t.type !== 'trailing_stop' && t.type !== 'bracket') return { errors: {} }
  if (!(await deps.tokens.resolve(t.mint))) return { errors: { 'trigger.mint': `Unknown token: ${t.mint}.` } }
  const price = await deps.tokens.priceUsd(t.mint)
  if (price === null) return { errors: { 'trigger.mint': `No price for ${t.mint} now.` } }
  if (t.type === 'trailing_stop') {
    const level = trailingStopLevel(t, price)
    return level > 0 ? { errors: {}, priceUsd: price } : { errors: { 'trigger.trailUsd': `Must be under the price now: ${t.mint} is ${price} USD.` }, priceUsd: price }
  }
  const side = bracketSide(t, price)
  if (!side) return { errors: {}, priceUsd: price }
  const field = side === 'stop_loss' ? 'trigger.stopLossUsd' : 'trigger.takeProfitUsd'
  return { errors: { [field]: `Already met: ${t.mint} is ${price} USD now. A level must be crossed after creation.` }, priceUsd: price }
}

/**
 * A TWAP's total against its tokenIn: no more decimals than the token has, and at least one base
 * unit per slice. Answers the token's decimals (kept with the order) and the problems.
 */
export async function checkTwapAmount(deps: Pick<AutomationPorts, 'tokens'>, order: OrderParams | undefined, tokenIn: unknown): Promise<{ errors: FieldErrors; decimals?: number }> {
  const t = order?.twap
  if (!t || typeof tokenIn !== 'string') return { errors: {} }
  const decimals = (await deps.tokens.resolve(tokenIn))?.decimals
  if (decimals === undefined) return { errors: {} }
  const [whole, frac = ''] = t.amountIn.split('.')
  if (frac.replace(/0+$/, '').length > decimals) return { errors: { 'action.args.amountIn': `At most ${decimals} decimals for ${tokenIn}.` }, decimals }
  const base = BigInt(whole! + frac.padEnd(decimals, '0').slice(0, decimals))
  if (base < BigInt(t.slices)) return { errors: { 'action.args.amountIn': `Too small to split into ${t.slices} slices.` }, decimals }
  return { errors: {}, decimals }
}

/**
 * How the client wrote an order kind's fields: the expanded names (`trigger.mint`,
 * `action.args.tokenOut`, ...) as `stop_loss.token`, `stop_loss.quoteOut`, `twap.overSeconds`.
 */
export function orderFieldNames(k: OrderKind): Record<string, string> {
  const common = { 'action.args.slippageBps': `${k}.slippageBps`, 'action.args.acknowledgeUnverified': `${k}.acknowledgeUnverified` }
  if (k === 'twap') {
    return { ...common, 'action.args.tokenIn': 'twap.tokenIn', 'action.args.tokenOut': 'twap.tokenOut', 'action.args.amountIn': 'twap.amountIn', 'trigger.everySeconds': 'twap.overSeconds', 'trigger.maxRuns': 'twap.slices' }
  }
  return {
    ...common, 'action.args.tokenIn': `${k}.token`, 'action.args.tokenOut': `${k}.quoteOut`, 'action.args.amountIn': `${k}.share`, 'trigger.mint': `${k}.token`,
    'trigger.priceUsd': `${k}.priceUsd`, 'trigger.trailUsd': `${k}.trailUsd`, 'trigger.trailPct': `${k}.trailPct`,
    'trigger.takeProfitUsd': `${k}.takeProfitUsd`, 'trigger.stopLossUsd': `${k}.stopLossUsd`,
  }
}
