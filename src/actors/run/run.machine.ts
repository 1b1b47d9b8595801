import { assign, cancel, enqueueActions, raise, setup, type AnyEventObject, type AnyMachineSnapshot } from 'xstate'
import { z } from 'zod'
import { ValidationError } from '../../domain/errors.ts'
import type { ModelMessage } from '../../domain/chat/ports.ts'
import type { RunInput, RunStep } from '../../domain/runs/ports.ts'
import type { ActorKind } from '../runtime/index.ts'
import { modelCallEventSchema } from '../conversation/modelCall.effects.ts'
import { toolCallEventSchema, type ToolResultParams } from '../conversation/toolCall.effects.ts'
import type { ChildEndEvent } from '../runtime/index.ts'
import { childEndMessages, conversationRetention, keyOf, newToolCalls, onChildEnd, onToolDone, onToolStarted, pendingCallIds, type ToolBook } from '../conversation/toolCalls.ts'

/** The run's effects: the same handlers as a chat turn's (modelCall.effect.ts, toolCall.effect.ts), bound to the run. */
export const RUN_MODEL_CALL = 'run.model'
export const RUN_TOOL_CALL = 'run.tool'
export const RUN_TOOL_RESULT = 'run.tool.result'

export type RunContext = RunInput & {
  /** Model calls started (a step is one model call and the tool calls it asked for). */
  stepsUsed: number
  steps: RunStep[]
  transcript: ModelMessage[]
  /** Keys of the current step's calls not answered yet. */
  pending: string[]
  /** Child ends that came before their call's report (absent in runs stored before children). */
  earlyEnds?: Record<string, ChildEndEvent>
  credits: number
  summary: string | null
  error: { code: string; message: string; status: number } | null
  /** Set by `run.stop`: what was still in flight then (a model call, tool call ids). */
  stop: { inFlight: { modelCall: boolean; toolCalls: string[] } } | null
  /** Set by the `maxSeconds` timer; checked before the next step. */
  timeUp: boolean
  /** Which budget ended the run, when one did. */
  exhausted: 'maxSteps' | 'maxCredits' | 'maxSeconds' | null
}

/** Asks a run to tell its agent when it ends (see RunInput.tellParent). */
export const RUN_TELL_PARENT = 'run.tell_parent'

/** The `maxSeconds` timer: raised with a delay on entering `running`, cancelled on leaving it. */
export const RUN_DEADLINE = 'run.deadline'
/** The same timer as runs stored before it had a name of its own hold it (xstate's generated name for `after`); see `renamedTimers`. */
const LEGACY_DEADLINE = 'xstate.after.deadline.run.running'

export const runEventSchema = z.union([
  modelCallEventSchema,
  toolCallEventSchema,
  z.object({ type: z.enum([`${RUN_MODEL_CALL}.failed`, `${RUN_TOOL_CALL}.failed`]), effectId: z.string(), error: z.string() }),
  z.object({ type: z.literal('run.stop') }),
  z.object({ type: z.literal(RUN_DEADLINE) }),
  // A schedule check of the run's agent met it in progress: the agent hears its end.
  z.object({ type: z.literal(RUN_TELL_PARENT) }),
])
type RunEvent = z.infer<typeof runEventSchema>
type ModelDone = Extract<RunEvent, { type: 'model.done' }>

const lastStep = (c: RunContext) => c.steps[c.steps.length - 1]
const withLastStep = (c: RunContext, f: (s: RunStep) => RunStep) => c.steps.map((s, i) => (i === c.steps.length - 1 ? f(s) : s))

/**
 * An autonomous run: `queued` -> `running` (step: a model call, then the tool calls it asked
 * for, then the next step) -> `completed` (the model answered without tool calls) | `stopped` |
 * `failed` | `budget_exhausted`. Budgets (`maxSteps`, `maxCredits`, and `maxSeconds` through a
 * durable timer) are checked before each step. `run.stop` starts nothing new: a model call in
 * flight is awaited and its answer recorded but not acted on; tool calls in flight complete and
 * are recorded; then the run ends `stopped`.
 */
export const runMachine = setup({
  types: { context: {} as RunContext, events: {} as RunEvent, input: {} as RunInput },
  actions: {
    [RUN_MODEL_CALL]: (_, _p: { step: number }) => {},
    [RUN_TOOL_CALL]: (_, _p: { callId: string; key: string; name: string; arguments: string }) => {},
    [RUN_TOOL_RESULT]: (_, _p: ToolResultParams) => {},
  },
  delays: { deadline: ({ context }) => context.maxSeconds * 1000 },
  guards: {
    stopRequested: ({ context }) => context.stop !== null,
    stepsSpent: ({ context }) => context.stepsUsed >= context.maxSteps,
    creditsSpent: ({ context }) => context.credits >= context.maxCredits,
    timeUp: ({ context }) => context.timeUp,
    wantsTools: ({ event }) => event.type === 'model.done' && event.toolCalls.length > 0,
    allToolsDone: ({ context }) => context.pending.length === 0,
  },
}).createMachine({
  id: 'run',
  initial: 'queued',
  context: ({ input }) => ({
    ...input,
    stepsUsed: 0,
    steps: [],
    transcript: [{ role: 'user', content: input.goal }],
    pending: [],
    earlyEnds: {},
    credits: 0,
    summary: null,
    error: null,
    stop: null,
    timeUp: false,
    exhausted: null,
  }),
  states: {
    queued: { always: 'running' },
    running: {
      initial: 'deciding',
      entry: raise({ type: RUN_DEADLINE }, { id: RUN_DEADLINE, delay: 'deadline' }),
      exit: cancel(RUN_DEADLINE),
      on: {
        [RUN_DEADLINE]: { actions: assign({ timeUp: true }) },
        [RUN_TELL_PARENT]: { actions: assign({ tellParent: true }) },
        'run.stop': {
          guard: ({ context }) => context.stop === null,
          actions: assign({ stop: ({ context }) => ({ inFlight: inFlightOf(context) }) }),
        },
      },
      states: {
        deciding: {
          always: [
            { guard: 'stopRequested', target: '#run.stopped' },
            { guard: 'stepsSpent', target: '#run.budget_exhausted', actions: assign({ exhausted: 'maxSteps' }) },
            { guard: 'creditsSpent', target: '#run.budget_exhausted', actions: assign({ exhausted: 'maxCredits' }) },
            { guard: 'timeUp', target: '#run.budget_exhausted', actions: assign({ exhausted: 'maxSeconds' }) },
            {
              target: 'thinking',
              actions: assign(({ context }) => ({
                stepsUsed: context.stepsUsed + 1,
                steps: [...context.steps, { step: context.stepsUsed + 1, content: null, model: null, credits: 0, usage: null, toolCalls: [], acted: false, answeredAt: null }],
              })),
            },
          ],
        },
        thinking: {
          entry: { type: RUN_MODEL_CALL, params: ({ context }) => ({ step: context.stepsUsed }) },
          on: {
            'model.done': [
              { guard: 'stopRequested', target: '#run.stopped', actions: assign(({ context, event }) => recordAnswer(context, event, false)) },
              {
                guard: 'wantsTools',
                target: 'acting',
                actions: assign(({ context, event }) => {
                  const answered = recordAnswer(context, event, true)
                  return { ...answered, pending: answered.steps.at(-1)!.toolCalls.map(keyOf) }
                }),
              },
              { target: '#run.completed', actions: assign(({ context, event }) => ({ ...recordAnswer(context, event, false), summary: event.content })) },
            ],
            'model.failed': { target: '#run.failed', actions: assign({ error: ({ event }) => event.error }) },
            'run.model.failed': { target: '#run.failed', actions: assign({ error: ({ event }) => ({ code: 'model_call_failed', message: event.error, status: 502 }) }) },
          },
        },
        acting: {
          entry: enqueueActions(({ context, enqueue }) => {
            for (const call of lastStep(context)?.toolCalls ?? []) {
              enqueue({ type: RUN_TOOL_CALL, params: { callId: call.id, key: keyOf(call), name: call.name, arguments: call.arguments } })
            }
          }),
          always: { guard: 'allToolsDone', target: 'deciding' },
          on: {
            'tool.done': { actions: assign(({ context, event }) => fromBook(context, onToolDone(bookOf(context), event))) },
            // A fund-moving call started a child (a swap): the step waits for its end, however long the chain takes.
            'tool.started': { actions: enqueueActions(({ context, event, enqueue }) => settle(context, onToolStarted(bookOf(context), event), enqueue)) },
            'child.done': { actions: enqueueActions(({ context, event, enqueue }) => settle(context, onChildEnd(bookOf(context), event), enqueue)) },
            'child.failed': { actions: enqueueActions(({ context, event, enqueue }) => settle(context, onChildEnd(bookOf(context), event), enqueue)) },
            'run.tool.failed': { target: '#run.failed', actions: assign({ error: ({ event }) => ({ code: 'tool_call_failed', message: event.error, status: 502 }) }) },
          },
        },
      },
    },
    completed: { type: 'final' },
    stopped: { type: 'final' },
    failed: { type: 'final' },
    budget_exhausted: { type: 'final' },
  },
})

/** What a stop finds in flight: the model call of a step that has no answer yet, tool calls not done (the model's ids). */
function inFlightOf(c: RunContext) {
  const step = lastStep(c)
  return { modelCall: step !== undefined && step.model === null, toolCalls: pendingCallIds(bookOf(c)) }
}

const bookOf = (c: RunContext): ToolBook => ({ calls: lastStep(c)?.toolCalls ?? [], pending: c.pending, transcript: c.transcript, earlyEnds: c.earlyEnds ?? {} })
const fromBook = (c: RunContext, b: ToolBook) => ({
  steps: withLastStep(c, (s) => ({ ...s, toolCalls: b.calls })),
  pending: b.pending,
  transcript: b.transcript,
  earlyEnds: b.earlyEnds,
})

/** Takes the book's new state, and writes the tool message of each call a child's end answered. */
function settle(
  context: RunContext,
  next: ToolBook,
  enqueue: { assign(a: Partial<RunContext>): void; (action: { type: typeof RUN_TOOL_RESULT; params: ToolResultParams }): void },
) {
  enqueue.assign(fromBook(context, next))
  for (const params of childEndMessages(bookOf(context), next)) enqueue({ type: RUN_TOOL_RESULT, params })
}

function recordAnswer(context: RunContext, event: ModelDone, acted: boolean) {
  return {
    credits: context.credits + event.credits,
    transcript: [...context.transcript, { role: 'assistant' as const, content: event.content || null, toolCalls: event.toolCalls }],
    steps: withLastStep(context, (s) => ({
      ...s,
      content: event.content,
      model: event.model,
      credits: event.credits,
      usage: event.usage,
      acted,
      answeredAt: event.at ?? null,
      toolCalls: newToolCalls(event.toolCalls, context.stepsUsed, acted ? 'pending' : 'skipped'),
    })),
  }
}

export const RUN_FINAL = new Set(['completed', 'stopped', 'failed', 'budget_exhausted'])

export const runKind: ActorKind = {
  kind: 'run',
  machine: runMachine,
  machineVersion: 1,
  // A run stored before the deadline had a name of its own holds it under xstate's name: it is heard as RUN_DEADLINE.
  renamedTimers: { [LEGACY_DEADLINE]: RUN_DEADLINE },
  parseEvent(event: unknown): AnyEventObject {
    const parsed = runEventSchema.safeParse(event)
    if (!parsed.success) throw new ValidationError({ type: 'unknown run event' })
    return parsed.data
  },
  // `running.thinking` -> `running`: the API shows the top-level state.
  statusOf: (s: AnyMachineSnapshot) => (typeof s.value === 'string' ? s.value : Object.keys(s.value)[0]!),
  effects: [RUN_MODEL_CALL, RUN_TOOL_CALL, RUN_TOOL_RESULT],
  // Stopped by its owner or an operator is not a failure; out of budget is.
  failureStates: ['failed', 'budget_exhausted'],
  isFailure: (s: AnyMachineSnapshot) => s.value === 'failed' || s.value === 'budget_exhausted',
  // A run an automation's firing started: the automation hears its end (the firing's outcome).
  // Its agent hears its end only when it asked (a run stored before `tellParent` was kept: always).
  tellsParent: (s: AnyMachineSnapshot) => (s.context as RunContext).tellParent !== false,
  watchersOf: (s: AnyMachineSnapshot) => {
    const automationId = (s.context as RunContext).automationId
    return automationId ? [automationId] : []
  },
  // What only the model calls and the machine needed: the API serves the steps, budgets, summary
  // and outcome (the run's id and account are its actor's, `runs.ts` reads them from there).
  compactDrops: ['transcript', 'system', 'tools', 'pending', 'earlyEnds', 'runId', 'accountId', 'stepsUsed', 'timeUp', 'temperature', 'tellParent', 'firstCallHold'],
  retention: (s: AnyMachineSnapshot) => conversationRetention(((s.context as RunContext).steps ?? []).flatMap((step) => step.toolCalls ?? [])),
}
