import { createActor, type AnyActorScope, type AnyEventObject, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate'
import type { Action } from './planActions.ts'

const scopes = new WeakMap<AnyStateMachine, AnyActorScope>()

/**
 * One inert actor scope per machine, as xstate's own `transition` builds one per call. Building
 * it means constructing an actor, which computes the machine's initial state without input (a
 * context factory that reads its input throws there, and xstate catches it): about 0.4 ms per
 * event on the 2-core benchmark machine, for a scope that only collects actions. The runtime
 * uses machines as pure reducers and transitions are synchronous, so one scope serves every call.
 */
function scopeOf(machine: AnyStateMachine): AnyActorScope {
  let scope = scopes.get(machine)
  if (!scope) {
    const self = createActor(machine)
    scope = { self, defer: () => {}, id: '', logger: () => {}, sessionId: '', stopChild: () => {}, system: self.system, emit: () => {}, actionExecutor: () => {} }
    scopes.set(machine, scope)
  }
  return scope
}

/** Runs `fn` with the machine's scope collecting the actions it asks for. */
function collecting<T>(machine: AnyStateMachine, fn: (scope: AnyActorScope) => T): [T, Action[]] {
  const actions: Action[] = []
  const scope = scopeOf(machine)
  scope.actionExecutor = (action) => void actions.push(action as Action)
  try {
    return [fn(scope), actions]
  } finally {
    scope.actionExecutor = () => {}
  }
}

/** xstate's `transition(machine, snapshot, event)`: the next snapshot and the actions to execute, nothing run. */
export function pureTransition(machine: AnyStateMachine, snapshot: AnyMachineSnapshot, event: AnyEventObject): [AnyMachineSnapshot, Action[]] {
  return collecting(machine, (scope) => machine.transition(snapshot, event, scope) as AnyMachineSnapshot)
}

/** xstate's `initialTransition(machine, input)`. */
export function pureInitialTransition(machine: AnyStateMachine, input: unknown): [AnyMachineSnapshot, Action[]] {
  return collecting(machine, (scope) => machine.getInitialSnapshot(scope, input) as AnyMachineSnapshot)
}
