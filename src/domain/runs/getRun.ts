import { NotFoundError } from '../errors.ts'
import type { Runs, RunState, RunStep } from './ports.ts'

const parseArguments = (raw: string): unknown => {
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

const txHashOf = (result: unknown): string | null =>
  result && typeof result === 'object' && typeof (result as { txHash?: unknown }).txHash === 'string' ? (result as { txHash: string }).txHash : null

/** When a step ended, so the next one started: its last tool call's end, else its answer (null when not recorded). */
const stepEndOf = (s: RunStep): string | null =>
  s.toolCalls.reduce<string | null>((latest, c) => (c.doneAt && (!latest || c.doneAt > latest) ? c.doneAt : latest), null) ?? s.answeredAt ?? null

/**
 * A run as the API shows it (DESIGN §9): status, goal, budgets and their use, each step's model
 * call and tool calls (arguments, result, tx hash, when each ended), credits, the final summary
 * (the model's last message), what a stop found in flight, timestamps.
 */
export function runView(run: RunState) {
  const ended = !['queued', 'running'].includes(run.status)
  return {
    id: run.runId,
    agentId: run.agentId,
    status: run.status,
    goal: run.goal,
    model: run.model,
    trigger: run.trigger,
    budgets: { maxSteps: run.maxSteps, maxCredits: run.maxCredits, maxSeconds: run.maxSeconds },
    used: { steps: run.steps.length, credits: run.credits, seconds: Math.round((Date.parse(run.updatedAt) - Date.parse(run.createdAt)) / 1000) },
    exhaustedBudget: run.exhausted,
    steps: run.steps.map((s, i) => ({
      step: s.step,
      startedAt: i === 0 ? run.createdAt : stepEndOf(run.steps[i - 1]!),
      modelCall: { status: s.model === null ? 'pending' : 'done', content: s.content, model: s.model, usage: s.usage, credits: s.credits, acted: s.acted, answeredAt: s.answeredAt ?? null },
      toolCalls: s.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: parseArguments(c.arguments), status: c.status, result: c.result, txHash: txHashOf(c.result), doneAt: c.doneAt ?? null })),
    })),
    credits: run.credits,
    summary: ended ? (run.steps.findLast((s) => s.content)?.content ?? run.summary) : null,
    stoppedInFlight: run.stop?.inFlight ?? null,
    error: run.error,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    endedAt: ended ? run.updatedAt : null,
  }
}

/**
 * Runs by id, each as its account sees it, in one read: those that do not exist or are another
 * account's are left out (an account event's data, rendered for a batch of events).
 *
 * @example
 * const views = await getRuns({ runs }, { refs: [{ accountId, runId }] })
 */
export async function getRuns({ runs }: { runs: Runs }, input: { refs: ReadonlyArray<{ accountId: string; runId: string }> }): Promise<Map<string, ReturnType<typeof runView>>> {
  const owner = new Map(input.refs.map((r) => [r.runId, r.accountId]))
  const found = await runs.getMany([...owner.keys()])
  return new Map(found.filter((r) => owner.get(r.runId) === r.accountId).map((r) => [r.runId, runView(r)]))
}

/**
 * One run of the account (404 for another account's).
 *
 * @example
 * const run = await getRun({ runs }, { accountId, runId })
 */
export async function getRun({ runs }: { runs: Runs }, input: { accountId: string; runId: string }) {
  const run = await runs.get(input.runId)
  if (!run || run.accountId !== input.accountId) throw new NotFoundError('Run')
  return runView(run)
}
