import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import pg from 'pg'
import type { AnyEventObject, StateValue } from 'xstate'
import { createLogger } from '../../src/logger.ts'
import { createActorRuntime } from '../../src/actors/runtime/actorRuntime.ts'
import type { ActorKind, EffectHandler } from '../../src/actors/runtime/actorKind.ts'
import { agentKind } from '../../src/actors/agent/agent.machine.ts'
import { launchKind } from '../../src/actors/launch/launch.machine.ts'
import { walletOpKind } from '../../src/actors/walletOp/walletOp.machine.ts'
import { chatTurnKind } from '../../src/actors/chatTurn/chatTurn.machine.ts'
import { runKind } from '../../src/actors/run/run.machine.ts'
import { automationKind } from '../../src/actors/automation/automation.machine.ts'

/** Every actor kind the service registers. */
export const ALL_KINDS: ActorKind[] = [agentKind, launchKind, walletOpKind, chatTurnKind, runKind, automationKind]

/** A handler for every effect of every kind that does nothing and reports nothing: tests drive the actors with events. */
export const quietHandlers: Record<string, EffectHandler> = Object.fromEntries(
  ALL_KINDS.flatMap((k) => k.effects).map((e) => [e, async () => null]),
)

export type SentEntry = { value: StateValue; version: number; context: Record<string, unknown>; cachedBefore: number }

/** A runtime as a process builds it (its own pool, an empty cache, pollers started): sends one event, stops. */
async function sendInFreshRuntime(url: string, id: string, event: AnyEventObject): Promise<SentEntry> {
  const pool = new pg.Pool({ connectionString: url, max: 3 })
  const runtime = createActorRuntime({ pool, kinds: ALL_KINDS, logger: createLogger({ level: 'silent' }), effectHandlers: quietHandlers, pollMs: 50 })
  const cachedBefore = runtime.cachedCount()
  await runtime.start()
  try {
    const entry = await runtime.send(id, event)
    return { value: entry.snapshot.value, version: entry.version, context: entry.snapshot.context, cachedBefore }
  } finally {
    await runtime.stop()
    await pool.end()
  }
}

/**
 * Sends `event` to actor `id` from a new Node process: nothing of this process (module state,
 * machine objects, caches, connections) is shared with it, as after a restart.
 *
 * @example
 * const entry = await sendFromNewProcess(url, id, { type: 'agent.pause', reason: 'r' })
 */
export async function sendFromNewProcess(url: string, id: string, event: AnyEventObject): Promise<SentEntry> {
  const { stdout } = await promisify(execFile)(process.execPath, [fileURLToPath(import.meta.url), JSON.stringify({ url, id, event })])
  return JSON.parse(stdout) as SentEntry
}

if (import.meta.main) {
  const { url, id, event } = JSON.parse(process.argv[2]!) as { url: string; id: string; event: AnyEventObject }
  process.stdout.write(JSON.stringify(await sendInFreshRuntime(url, id, event)))
}
