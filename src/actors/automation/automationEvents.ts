import { z } from 'zod'
import { childEndEventSchema } from '../runtime/index.ts'

/** The automation's one durable timer (interval and schedule triggers): due at `nextRunAt`. */
export const AUTOMATION_DUE = 'automation.due'
/** The timer of machine version 1, a delayed transition of `armed.timed` (a stored v1 automation may still hold one): heard as AUTOMATION_DUE (see `renamedTimers`). */
export const LEGACY_DUE = 'xstate.after.due.automation.armed.timed'
/** The firing effect: runs the action of firing `number` (automation.effects.ts). */
export const AUTOMATION_FIRE = 'automation.fire'

const source = z.discriminatedUnion('source', [
  z.object({ source: z.literal('timer') }),
  z.object({ source: z.literal('manual') }),
  z.object({ source: z.literal('price'), block: z.string(), priceUsd: z.string(), side: z.enum(['take_profit', 'stop_loss']).optional() }),
  z.object({ source: z.literal('launch'), token: z.object({ address: z.string(), symbol: z.string(), venue: z.string(), quote: z.string(), creator: z.string() }) }),
  z.object({ source: z.literal('webhook'), messageId: z.string(), values: z.record(z.string(), z.string()) }),
  // A leader's confirmed swap, written into a mirror's inbox with the confirmation (Migration20261128020000_mirror.ts).
  z.object({
    source: z.literal('leader_swap'),
    swap: z.object({
      id: z.string(), tokenIn: z.string(), tokenOut: z.string(), symbolIn: z.string(), symbolOut: z.string(), decimalsIn: z.number().int(),
      amountIn: z.string().regex(/^\d+$/), valueInUsd: z.string(), txHash: z.string().nullable(), confirmedAt: z.string(),
    }),
  }),
])

/** The events an automation takes, as its `parseEvent` checks them before they reach the machine. */
export const automationEventSchema = z.union([
  z.object({ type: z.literal('automation.trigger'), source }),
  // A block's price for a trailing stop or a bracket (the trigger feed); the machine decides what it means.
  z.object({ type: z.literal('automation.price'), block: z.string(), priceUsd: z.string().regex(/^\d+(\.\d+)?$/) }),
  z.object({ type: z.literal(AUTOMATION_DUE) }),
  z.object({ type: z.enum(['automation.pause', 'automation.resume', 'automation.cancel', 'automation.agentStarted']) }),
  z.object({ type: z.literal('automation.update'), changes: z.record(z.string(), z.unknown()) }),
  // `runId`: the run an `agent_prompt` firing started, recorded as the firing's child.
  z.object({ type: z.literal('fire.done'), effectId: z.string(), result: z.unknown(), runId: z.string().optional() }),
  z.object({ type: z.literal('fire.started'), effectId: z.string(), childId: z.string(), result: z.unknown() }),
  // `refusal`: a mirror's copy refused by its own limits (over its cap, a token off its list): reported, not a failure in a row.
  z.object({ type: z.literal('fire.failed'), effectId: z.string(), code: z.string(), reason: z.string(), refusal: z.boolean().optional() }),
  // `counted`: a TWAP slice skipped for its price impact is done (reported), not given back.
  z.object({ type: z.literal('fire.skipped'), effectId: z.string(), reason: z.string(), counted: z.boolean().optional() }),
  z.object({ type: z.literal(`${AUTOMATION_FIRE}.failed`), effectId: z.string(), error: z.string() }),
  childEndEventSchema,
])
