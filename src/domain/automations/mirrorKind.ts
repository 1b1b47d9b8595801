import { formatUnits } from 'viem'
import { ServiceError, type FieldErrors } from '../errors.ts'
import type { CreateAutomationBody } from './automation.schema.ts'
import type { AutomationAction, AutomationTrigger, LeaderSwap, MirrorParams } from './automation.types.ts'
import type { AutomationPorts } from './ports.ts'

/** 422 `mirror_cycle`: a mirror of the agent itself, or of an agent that (through its own mirrors) already copies it. */
export class MirrorCycleError extends ServiceError {
  constructor(message: string) {
    super(message, { code: 'mirror_cycle', status: 422, fieldErrors: { 'mirror.leaderAgentId': message } })
  }
}

/** 403 `copy_not_allowed`: another account's agent that is not public or whose owner does not allow copying (`allow_copy`). */
export class CopyNotAllowedError extends ServiceError {
  constructor() {
    super("This agent's owner does not allow copying it (its card's allowCopy is false).", { code: 'copy_not_allowed', status: 403, fieldErrors: { 'mirror.leaderAgentId': 'Copying not allowed.' } })
  }
}

/** Ratios are kept to 6 decimals. */
const RATIO_SCALE = 1_000_000n

/**
 * `kind: "mirror"` as a trigger and an action: a `leader_swap` trigger on the leader, and a swap
 * whose tokens and amount each firing takes from the leader's swap (only its `slippageBps` is
 * the mirror's own).
 */
export function expandMirror(body: CreateAutomationBody): { trigger: AutomationTrigger; action: AutomationAction; params: MirrorParams } {
  const m = body.mirror!
  return {
    trigger: { type: 'leader_swap', leaderAgentId: m.leaderAgentId },
    action: { type: 'tool_call', tool: 'swap_execute', args: m.slippageBps ? { slippageBps: m.slippageBps } : {} },
    params: { ratio: m.ratio, maxPerTradeUsd: m.maxPerTradeUsd, maxDelaySeconds: m.maxDelaySeconds, ...(m.tokens ? { tokens: m.tokens } : {}) },
  }
}

/**
 * Whether `follower` mirroring `leader` closes a loop, given the mirrors there are (`edges`:
 * follower -> leader): the leader is the follower, or copies it through a chain of mirrors.
 *
 * @example
 * mirrorCycle([{ follower: 'B', leader: 'A' }], 'A', 'B') // true (A would copy B, which copies A)
 */
export function mirrorCycle(edges: ReadonlyArray<{ follower: string; leader: string }>, follower: string, leader: string): boolean {
  const seen = new Set<string>()
  const todo = [leader]
  while (todo.length > 0) {
    const at = todo.pop()!
    if (at === follower) return true
    if (seen.has(at)) continue
    seen.add(at)
    for (const e of edges) if (e.follower === at) todo.push(e.leader)
  }
  return false
}

/**
 * A mirror's leader at creation: the account's own agent, or a public one whose owner allows
 * copying (403 `copy_not_allowed` otherwise; one that is neither the account's nor public is
 * unknown); never the follower itself nor an agent that copies it (422 `mirror_cycle`). The
 * allow list's tokens are known (kept as addresses and symbols). Answers the params to keep.
 */
export async function checkMirror(deps: Pick<AutomationPorts, 'mirrors' | 'tokens'>, accountId: string, followerId: string, p: MirrorParams & { leaderAgentId: string }): Promise<{ errors: FieldErrors; params: MirrorParams }> {
  const errors: FieldErrors = await checkLeader(deps, accountId, followerId, p.leaderAgentId)
  const tokens: string[] = []
  for (const [i, ref] of (p.tokens ?? []).entries()) {
    const t = await deps.tokens.resolve(ref)
    if (!t) errors[`mirror.tokens.${i}`] = `Unknown token: ${ref}.`
    else tokens.push(t.address.toLowerCase(), t.symbol.toUpperCase())
  }
  const { leaderAgentId: _, ...params } = p
  return { errors, params: { ...params, ...(p.tokens ? { tokens: [...new Set(tokens)] } : {}) } }
}

/** The leader may be copied by the account's agent `followerId` (see checkMirror). */
async function checkLeader(deps: Pick<AutomationPorts, 'mirrors'>, accountId: string, followerId: string, leaderId: string): Promise<FieldErrors> {
  if (leaderId === followerId) throw new MirrorCycleError('An agent cannot mirror itself.')
  const leader = await deps.mirrors.leader(leaderId)
  const own = leader?.accountId === accountId
  if (!leader || leader.status === 'deleted' || (!own && !leader.isPublic)) return { 'mirror.leaderAgentId': `Unknown agent: ${leaderId}.` }
  if (!own && !leader.allowCopy) throw new CopyNotAllowedError()
  if (mirrorCycle(await deps.mirrors.edges(), followerId, leaderId)) throw new MirrorCycleError('The leader already copies this agent (through its mirrors): a mirror of it would copy its own copies.')
  return {}
}

const onList = (list: readonly string[], address: string, symbol: string) => list.includes(address.toLowerCase()) || list.includes(symbol.toUpperCase())

/** A mirror firing's end decided before its swap: refused (`fire.failed`) or skipped and counted (`fire.skipped`). */
export type MirrorRefusal = { type: 'fire.failed'; code: string; reason: string; refusal: true } | { type: 'fire.skipped'; reason: string; counted: true }

/**
 * The follower's copy of a leader's swap, at `now` (ms): the same tokens, `ratio` of its amount
 * (in tokenIn's base units, rounded down). Skipped (`mirror_too_late`) when seen more than
 * `maxDelaySeconds` after the leader's swap confirmed; refused (a failed firing) when a token is
 * off the allow list (`mirror_token_not_allowed`), the copy's USD value (the leader's value at
 * the ratio) is over `maxPerTradeUsd` (`mirror_over_max_per_trade`: refused, never capped), or
 * the copy rounds to nothing. A refusal (`refusal: true`) is the mirror's own limit at work: it
 * does not count toward the failed firings in a row that put an automation in `error`.
 *
 * @example
 * mirrorSwapArgs(params, swap, Date.parse(swap.confirmedAt)) // { args: { tokenIn, tokenOut, amountIn: '0.5', ... } }
 */
export function mirrorSwapArgs(p: MirrorParams, s: LeaderSwap, now: number, args: Record<string, unknown> = {}): { args: Record<string, unknown> } | MirrorRefusal {
  const lateMs = now - Date.parse(s.confirmedAt)
  if (lateMs > p.maxDelaySeconds * 1000) {
    return { type: 'fire.skipped', counted: true, reason: `mirror_too_late: leader swap ${s.id} seen ${Math.round(lateMs / 1000)} s after it confirmed, over maxDelaySeconds ${p.maxDelaySeconds}.` }
  }
  if (p.tokens && (!onList(p.tokens, s.tokenIn, s.symbolIn) || !onList(p.tokens, s.tokenOut, s.symbolOut))) {
    return { type: 'fire.failed', refusal: true, code: 'mirror_token_not_allowed', reason: `Leader swap ${s.id} trades ${s.symbolIn} -> ${s.symbolOut}, not both on the mirror's tokens.` }
  }
  const ratio = BigInt(Math.round(p.ratio * Number(RATIO_SCALE)))
  const usd = (Number(s.valueInUsd) * Number(ratio)) / Number(RATIO_SCALE)
  if (usd > Number(p.maxPerTradeUsd) + 1e-9) {
    return { type: 'fire.failed', refusal: true, code: 'mirror_over_max_per_trade', reason: `The copy of leader swap ${s.id} is worth ${usd.toFixed(2)} USD (ratio ${p.ratio}), over maxPerTradeUsd ${p.maxPerTradeUsd}: refused, not capped.` }
  }
  const base = (BigInt(s.amountIn) * ratio) / RATIO_SCALE
  if (base <= 0n) return { type: 'fire.failed', refusal: true, code: 'mirror_amount_too_small', reason: `The copy of leader swap ${s.id} at ratio ${p.ratio} rounds to nothing.` }
  const ack = p.tokens ? { acknowledgeUnverified: true } : {}
  return { args: { ...args, ...ack, tokenIn: s.tokenIn, tokenOut: s.tokenOut, amountIn: formatUnits(base, s.decimalsIn) } }
}
