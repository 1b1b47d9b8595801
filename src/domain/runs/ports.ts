import type { ModelUsage } from '../chat/ports.ts'
import type { AgentRecord } from '../agents/ports.ts'

export type RunStatus = 'queued' | 'running' | 'completed' | 'stopped' | 'failed' | 'budget_exhausted'

export type RunBudgets = { maxSteps: number; maxCredits: number; maxSeconds: number }

/** What a run starts with (the run actor's input). */
export type RunInput = RunBudgets & {
  runId: string
  accountId: string
  agentId: string
  /** The catalog id of the model. */
  model: string
  temperature: number | null
  goal: string
  /** The tools the agent's skills grant (names), fixed when the run starts. */
  tools: string[]
  /** The system prompt (the run's preamble, the agent, its skills' text), fixed when the run starts. */
  system: string
  /** What started it: an owner's request, the agent's schedule or an automation's firing. */
  trigger: 'api' | 'schedule' | 'automation'
  /**
   * The automation whose `agent_prompt` firing started it (absent otherwise, and in runs stored
   * before it was kept): the run's money moves count against that automation's `max_spend_usd`.
   */
  automationId?: string
  /**
   * Whether the run's agent hears its end (false: only once a schedule check that met it in
   * progress asks, `run.tell_parent`). Absent in runs stored before it was kept: it does.
   */
  tellParent?: boolean
  /**
   * Credits held for the run's first model call in the run's own insert (its worst case, under
   * that call's effect id), so the call finds them held instead of holding them itself. Absent:
   * the call holds them (runs stored before it was kept, a run created without the hold).
   */
  firstCallHold?: number
}

export type RunToolCall = {
  /** The model's tool call id. */
  id: string
  /** The run's own key for the call (`<step>.<index>`; absent in runs stored before it was kept). */
  key?: string
  name: string
  arguments: string
  /** `failed`: the operation the call started (a swap) ended failed on chain. */
  status: 'pending' | 'ok' | 'refused' | 'skipped' | 'failed'
  result: unknown
  /** The operation the call started and waited for, if any. */
  childId?: string | null
  effectId?: string
  /** When it ended (null while pending, for a skipped call, and in runs stored before it was kept). */
  doneAt?: string | null
}

/** One step: a model call and the tool calls it asked for (`acted`: false when they were not run). */
export type RunStep = {
  step: number
  content: string | null
  model: string | null
  credits: number
  usage: ModelUsage | null
  toolCalls: RunToolCall[]
  acted: boolean
  /** When the model's answer arrived (null before it, and in runs stored before it was kept). */
  answeredAt?: string | null
}

/** A run as its actor records it. */
export type RunState = RunInput & {
  status: RunStatus
  steps: RunStep[]
  credits: number
  summary: string | null
  error: { code: string; message: string; status: number } | null
  stop: { inFlight: { modelCall: boolean; toolCalls: string[] } } | null
  exhausted: 'maxSteps' | 'maxCredits' | 'maxSeconds' | null
  createdAt: string
  updatedAt: string
}

/** Runs as actors (src/actors/run/runs.ts). */
export interface Runs {
  /** Creates the run's actor and writes its goal as a message (with `coverCredits`, only when the account's balance less its reservations covers them: InsufficientCreditsError otherwise); answers the run as created (as it is, when it existed already); RunInProgressError when the agent has one not ended. */
  start(run: RunInput, opts?: { coverCredits?: number }): Promise<RunState>
  get(runId: string): Promise<RunState | undefined>
  /** Runs by id, in one read (those that do not exist are left out). */
  getMany(runIds: readonly string[]): Promise<RunState[]>
  /**
   * An agent's runs made by the account, newest first, strictly after the cursor `(createdAt, id)`
   * when given (a former owner's runs of a sold agent stay its own: never listed for the buyer).
   */
  list(agentId: string, opts: { accountId: string; limit: number; status?: RunStatus | undefined; before?: { at: string; id: string } | undefined }): Promise<RunState[]>
  /** Asks the run to stop (nothing new starts), then waits up to `waitMs` for it to end. */
  stop(runId: string, accountId: string, waitMs: number): Promise<RunState | undefined>
  /** Asks the agent's run in progress, if any, to tell the agent when it ends; false when none is in progress (any more). */
  tellAgentAtEnd(agentId: string): Promise<boolean>
  /**
   * Asks the agent's run in progress, if any, to stop (without waiting); answers its id. With
   * `stoppedBy` (the id of the effect the agent's stop, pause or delete planned), only a run
   * created before that stop was committed: a run started after it (a run may start on a
   * stopped agent) is left alone. Without it, or when that effect is not found: the run in
   * progress, whenever it was created.
   */
  stopActive(agentId: string, opts?: { stoppedBy?: string | undefined }): Promise<string | null>
  /** A schedule check's reads in one: the agent, when its newest scheduled run was created, and the account's balance (undefined: no such agent of the account). */
  scheduleFacts(accountId: string, agentId: string): Promise<{ agent: AgentRecord; lastRunAt: Date | null; /** A run of the agent not ended. */ activeRun: boolean; balance: { credits: number; reserved: number } } | undefined>
}
