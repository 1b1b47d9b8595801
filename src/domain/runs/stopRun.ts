import { NotFoundError } from '../errors.ts'
import type { Runs } from './ports.ts'
import { runView } from './getRun.ts'

/**
 * Stops a run of the account: no new step or tool call starts; a model call or tool calls
 * already sent complete and are recorded (a model's answer is not acted on). Waits for the run
 * to end (up to `waitMs`) and answers it, with `stoppedInFlight` naming what was in flight. A run
 * that has already ended is answered as it is.
 *
 * @example
 * const run = await stopRun({ runs, waitMs: 30_000 }, { accountId, runId })
 */
export async function stopRun({ runs, waitMs }: { runs: Runs; waitMs: number }, input: { accountId: string; runId: string }) {
  const run = await runs.get(input.runId)
  if (!run || run.accountId !== input.accountId) throw new NotFoundError('Run')
  const after = await runs.stop(input.runId, input.accountId, waitMs)
  return runView(after ?? run)
}
