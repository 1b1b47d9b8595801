import { AsyncLocalStorage } from 'node:async_hooks'
import type { FinishWrite } from './actorKind.ts'

/**
 * The effect whose handler is running, as the code under it sees it: its actor, and a way to
 * write with its outcome. A use case reached from a handler (a model's tool call, an automation's
 * firing) that starts a child of that actor creates it with the effect's outcome, in the
 * transaction that commits the parent's transition on it: the child exists exactly when the
 * parent has recorded it (see `childOfRunningEffect`).
 */
export type EffectScope = { actorId: string; finishWith(write: FinishWrite): void }

const scope = new AsyncLocalStorage<EffectScope>()

/** Runs an effect's handler with its scope. */
export const runInEffectScope = <T>(s: EffectScope, fn: () => Promise<T>): Promise<T> => scope.run(s, fn)

/**
 * The running effect's scope when `parentId` is its actor (a child started on its behalf), else
 * undefined: the child is then created at once, as for a request.
 */
export function childOfRunningEffect(parentId: string | null | undefined): EffectScope | undefined {
  const s = parentId ? scope.getStore() : undefined
  return s?.actorId === parentId ? s : undefined
}
