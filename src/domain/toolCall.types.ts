import type { FieldErrors } from './errors.ts'

/** What a tool call answers: its result, or the API's error (`code` as on the HTTP routes). */
export type ToolOutcome =
  | { ok: true; result: unknown }
  | { ok: false; error: { error: string; code: string; fieldErrors?: FieldErrors }; status: number }

/**
 * The actor a tool call acts for: a fund-moving tool creates its operation as this actor's
 * child (it hears the operation's end in its inbox) and reports the child's id through `started`,
 * instead of waiting for the chain.
 */
export type ParentBinding = { actorId: string; started(childId: string): void }

/** A tool as an actor sees it: its name, what it is for, the scope it needs, whether it moves funds, its arguments' JSON Schema. */
export type ToolInfo = { name: string; description: string; scope: string; movesFunds: boolean; parameters(): Record<string, unknown> }

/**
 * The tool registry as the actors that call tools (a model's tool call, an automation's firing)
 * use it, handed in by the composition root (implemented by src/tools/toolPort.ts).
 */
export type ToolPort = {
  find(name: string): ToolInfo | undefined
  /** The ids a call's operation may have (each fund-moving tool derives its own from the call id). */
  operationIdsOf(accountId: string, callId: string): string[]
  /** Runs the tool bound to one agent; a refusal is the outcome, anything else is thrown. */
  call(name: string, args: unknown, input: { accountId: string; agentId: string; callId: string; parent?: ParentBinding | undefined }): Promise<ToolOutcome>
}
