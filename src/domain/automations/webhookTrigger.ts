import type { FieldErrors } from '../errors.ts'
import type { AutomationAction, AutomationTrigger, HookValueSpec } from './automation.types.ts'
import type { AutomationPorts } from './ports.ts'

const AMOUNT = /^\d{1,40}(\.\d{1,40})?$/
/** A sender's message id: what a message sent twice is recognised by. */
const MESSAGE_ID = /^[\x21-\x7e]{1,200}$/

/** A value an argument can take, to check that the action accepts the argument at all. */
const sampleOf = (spec: HookValueSpec) => (spec.type === 'amount' ? (spec.max ?? '1') : spec.type === 'enum' ? (spec.values?.[0] ?? 'x') : 'x')

/**
 * A `webhook` trigger's `values`, checked at creation: they set arguments of a `tool_call`
 * action that the tool accepts (an `agent_prompt` takes none), and an `enum` lists its values.
 *
 * @example
 * checkWebhookTrigger(deps, { trigger: { type: 'webhook', values: { amount: { type: 'amount', arg: 'amountIn' } } }, action })
 */
export function checkWebhookTrigger(deps: Pick<AutomationPorts, 'tools'>, e: { trigger: AutomationTrigger; action: AutomationAction }): FieldErrors {
  if (e.trigger.type !== 'webhook' || !e.trigger.values) return {}
  const errors: FieldErrors = {}
  for (const [name, spec] of Object.entries(e.trigger.values)) {
    const at = `trigger.values.${name}`
    if (e.action.type !== 'tool_call') errors[at] = 'Only a tool_call action takes values.'
    else if (spec.type === 'enum' && !spec.values) errors[`${at}.values`] = 'Required for an enum.'
    else {
      const arg = spec.arg ?? name
      const bad = deps.tools.check(e.action.tool, { ...e.action.args, [arg]: sampleOf(spec) })?.[arg]
      if (bad) errors[`${at}.arg`] = `${e.action.tool} does not take ${arg} as such a value: ${bad}`
    }
  }
  return errors
}

function readOne(spec: HookValueSpec, raw: unknown): { value: string } | { error: string } {
  // An amount is a decimal string, as everywhere in the API: a JSON number may not carry it exactly.
  if (spec.type === 'amount' && typeof raw !== 'string') return { error: 'A decimal string such as "0.05" (a JSON number is refused: it may not carry the amount exactly).' }
  const text = typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : raw
  if (typeof text !== 'string') return { error: 'A string.' }
  if (spec.type === 'amount') {
    if (!AMOUNT.test(text) || !/[1-9]/.test(text)) return { error: 'A decimal amount greater than 0, such as "0.05".' }
    if (spec.max && Number(text) > Number(spec.max)) return { error: `At most ${spec.max}.` }
  }
  if (spec.type === 'enum' && !spec.values?.includes(text)) return { error: `One of ${spec.values?.join(', ')}.` }
  if (spec.type === 'string' && (text.length === 0 || text.length > 200)) return { error: '1 to 200 characters.' }
  return { value: text }
}

/**
 * A signal webhook's message, read against its trigger: the sender's message id (the
 * `webhook-id` header, else the body's `id`) and the values the trigger declares, each named by
 * the argument it sets. Every problem is named (the body's field), and then nothing fires.
 * Other body fields are ignored (a TradingView alert carries what its author wrote). Pure.
 *
 * @example
 * readHookMessage({ type: 'webhook', values: { amount: { type: 'amount', arg: 'amountIn' } } }, { headerId: 'msg_1', body: { amount: '0.05' } })
 * // { messageId: 'msg_1', values: { amountIn: '0.05' } }
 */
export function readHookMessage(
  trigger: Extract<AutomationTrigger, { type: 'webhook' }>,
  { headerId, body }: { headerId: string | undefined; body: unknown },
): { messageId: string; values: Record<string, string> } | { errors: FieldErrors } {
  const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {}
  const errors: FieldErrors = {}
  const id = headerId ?? fields.id
  if (typeof id !== 'string' || !MESSAGE_ID.test(id)) {
    errors.id = headerId === undefined ? 'Required without a webhook-id header: the message id (1-200 visible characters), so a message sent twice fires once.' : 'The webhook-id header: 1-200 visible characters.'
  }
  const values: Record<string, string> = {}
  for (const [name, spec] of Object.entries(trigger.values ?? {})) {
    if (fields[name] === undefined) {
      if (spec.required) errors[name] = 'Required.'
      continue
    }
    const read = readOne(spec, fields[name])
    if ('error' in read) errors[name] = read.error
    else values[spec.arg ?? name] = read.value
  }
  if (Object.keys(errors).length > 0) return { errors }
  return { messageId: id as string, values }
}

/** The argument naming the token an amount argument is counted in: its decimals bound the amount's. */
const TOKEN_OF_AMOUNT: Record<string, string> = { amountIn: 'tokenIn', amount: 'token', amountOut: 'tokenOut' }

/**
 * A message's values checked at the hook with the rules the action applies when it fires: the
 * tool's own argument check (formats, ranges) and, for an amount, the decimals of the token it
 * is counted in. Errors are named by the body's field; none means the firing will take them.
 *
 * @example
 * await checkHookValues(deps, trigger, { type: 'tool_call', tool: 'swap_execute', args: { tokenIn: 'ETH', tokenOut: 'USDC' } }, { amountIn: '0.05' }) // {}
 */
export async function checkHookValues(
  deps: Pick<AutomationPorts, 'tools' | 'tokens'>,
  trigger: Extract<AutomationTrigger, { type: 'webhook' }>,
  action: AutomationAction,
  values: Record<string, string>,
): Promise<FieldErrors> {
  if (action.type !== 'tool_call' || Object.keys(values).length === 0) return {}
  const fieldOf: Record<string, string> = Object.fromEntries(Object.entries(trigger.values ?? {}).map(([name, spec]) => [spec.arg ?? name, name]))
  const args: Record<string, unknown> = { ...action.args, ...values }
  const errors: FieldErrors = {}
  for (const [arg, message] of Object.entries(deps.tools.check(action.tool, args) ?? {})) if (fieldOf[arg] && arg in values) errors[fieldOf[arg]] = message
  for (const [arg, value] of Object.entries(values)) {
    const field = fieldOf[arg] ?? arg
    const ref = TOKEN_OF_AMOUNT[arg] && args[TOKEN_OF_AMOUNT[arg]]
    if (errors[field] || typeof ref !== 'string') continue
    const token = await deps.tokens.resolve(ref)
    const decimals = value.split('.')[1]?.length ?? 0
    if (token?.decimals !== undefined && decimals > token.decimals) errors[field] = `${token.symbol} has ${token.decimals} decimals: at most ${token.decimals} digits after the point.`
  }
  return errors
}
