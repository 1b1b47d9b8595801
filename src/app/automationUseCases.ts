import type { CoreAdapters } from './coreAdapters.ts'
import type { AgentsRepository } from '../domain/agents/ports.ts'
import type { FieldErrors } from '../domain/errors.ts'
import { fieldErrorsOf } from '../domain/fieldErrors.ts'
import { createAutomationsStore } from '../adapters/db/automations.store.ts'
import { createAutomations } from '../actors/automation/automations.ts'
import type { AutomationPorts } from '../domain/automations/ports.ts'
import { createAutomation, previewAutomation, type CreateAutomationInput } from '../domain/automations/createAutomation.ts'
import { getAutomation, listAutomations } from '../domain/automations/readAutomations.ts'
import { checkHookValues } from '../domain/automations/webhookTrigger.ts'
import { cancelAutomation, previewTriggerAutomation, previewUpdateAutomation, triggerAutomation, updateAutomation } from '../domain/automations/updateAutomation.ts'
import type { CreateAutomationBody, ListAutomationsQuery, UpdateAutomationBody } from '../domain/automations/automation.schema.ts'
import { toolArgs } from '../tools/callTool.ts'
import { findTool } from '../tools/registry.ts'
import { AUTOMATION_TOOL_NAMES } from '../tools/automationTools.ts'
import { createAutomationHooks, type HookMessage } from '../actors/automation/automationHooks.ts'

/** What the automation use cases read from the rest of core: the tools an agent's skills grant, tokens and their prices. */
export type AutomationSources = {
  grantedTools(accountId: string, skills: readonly string[]): Promise<string[]>
  resolveToken(ref: string): Promise<{ address: string; symbol: string; decimals?: number } | undefined>
  priceUsd(ref: string): Promise<string | null>
}

/** A tool's arguments checked as every front door parses them (`agent_id` is the automation's agent). */
function checkToolArgs(tool: string, args: Record<string, unknown>): FieldErrors | null {
  const t = findTool(tool)
  if (!t) return { tool: `Unknown tool ${tool}.` }
  const parsed = toolArgs(t).safeParse(args)
  return parsed.success ? null : fieldErrorsOf(parsed.error)
}

/**
 * The automations' use cases (src/domain/automations), wired for src/app/core.ts: each automation is
 * an actor (src/actors/automation/automation.machine.ts); its firings run the same tools as a model.
 *
 * @example
 * const automations = automationUseCases(adapters, sources, agents)
 * await automations.createAutomation({ accountId, automationId, body })
 */
export function automationUseCases({ pool, runtime, identity }: CoreAdapters, sources: AutomationSources, agents: AgentsRepository) {
  const store = createAutomationsStore(pool)
  const deps: AutomationPorts = {
    automations: createAutomations({ runtime, store }),
    agents: {
      async getOwned(accountId, agentId) {
        const a = await agents.getOwned(accountId, agentId)
        return { id: a.id, skills: a.skills, status: a.status }
      },
    },
    // An automation's action is never an automation tool: a firing must not create or change automations.
    tools: { granted: async (accountId, skills) => (await sources.grantedTools(accountId, skills)).filter((t) => !AUTOMATION_TOOL_NAMES.has(t)), check: checkToolArgs },
    tokens: { resolve: sources.resolveToken, priceUsd: sources.priceUsd },
    mirrors: { leader: (agentId) => store.mirrorLeader(agentId), edges: () => store.mirrorEdges() },
    limits: identity.config.automations,
    clock: { now: () => Date.now() },
  }
  const hooks = createAutomationHooks({ pool, runtime, automations: deps.automations, checkValues: (trigger, action, values) => checkHookValues(deps, trigger, action, values) })
  return {
    /** A `webhook` trigger's creation also answers `hook: { path, secret }`, once (a retry of the request finds the automation, not the secret). */
    async createAutomation(input: CreateAutomationInput) {
      const isNew = input.body.trigger?.type === 'webhook' && !(await deps.automations.get(input.automationId))
      const hook = isNew ? await hooks.issue({ automationId: input.automationId, accountId: input.accountId }) : undefined
      const view = await createAutomation(deps, input)
      return hook ? { ...view, hook } : view
    },
    /** A signal webhook's message (POST /hooks/automations/:id/:token): fires the automation once per message id. */
    receiveAutomationHook: (message: HookMessage) => hooks.receive(message),
    /** A new hook URL token and secret (POST /automations/:id/hook/rotate); the previous pair works for `graceSeconds` more. */
    rotateAutomationHook: (input: { accountId: string; automationId: string; graceSeconds: number }) => hooks.rotate(input),
    /** What createAutomation would create, after the same checks; creates nothing. */
    previewAutomation: (input: { accountId: string; body: CreateAutomationBody }) => previewAutomation(deps, input),
    previewUpdateAutomation: (input: { accountId: string; automationId: string; body: UpdateAutomationBody }) => previewUpdateAutomation(deps, input),
    previewTriggerAutomation: (input: { accountId: string; automationId: string }) => previewTriggerAutomation(deps, input),
    getAutomation: (input: { accountId: string; automationId: string }) => getAutomation(deps, input),
    listAutomations: (input: { accountId: string; query: ListAutomationsQuery }) => listAutomations(deps, input),
    updateAutomation: (input: { accountId: string; automationId: string; body: UpdateAutomationBody }) => updateAutomation(deps, input),
    cancelAutomation: (input: { accountId: string; automationId: string }) => cancelAutomation(deps, input),
    triggerAutomation: (input: { accountId: string; automationId: string }) => triggerAutomation(deps, input),
  }
}
