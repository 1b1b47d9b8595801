import { DEFAULT_POLICY, policyView } from './policy.ts'
import { pendingChangesView } from './pendingChanges.ts'
import type { AgentLiveStatus, AgentRecord, WhitelistEntry } from './ports.ts'
import { isoTimestamp as iso } from '../util/isoTimestamp.ts'

/**
 * The agent resource as the API shows it: camelCase, as every response is (request bodies stay
 * snake_case). The one place that shapes an agent for a response; never the wallet key.
 */
export function agentView(agent: AgentRecord, live?: AgentLiveStatus) {
  return {
    id: agent.id,
    name: agent.name,
    model: agent.model,
    skills: agent.skills,
    systemPrompt: agent.systemPrompt,
    payoutWallet: agent.payoutWallet,
    persona: agent.persona,
    strategy: agent.strategy,
    temperature: agent.temperature,
    isPublic: agent.isPublic,
    // Other accounts' mirrors may copy this agent's swaps (while it is public).
    allowCopy: agent.allowCopy ?? false,
    publicDescription: agent.publicDescription,
    runIntervalSeconds: agent.runIntervalSeconds,
    mode: agent.mode,
    policy: policyView({ ...DEFAULT_POLICY, ...agent.policy }),
    walletAddress: agent.walletAddress,
    status: live?.status ?? agent.status,
    statusReason: live ? live.reason : agent.statusReason,
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
    // Loosening changes of the policy or payout wallet that wait for their hold, soonest first.
    pendingChanges: pendingChangesView(agent.pending),
  }
}
export type AgentView = ReturnType<typeof agentView>

/** A whitelist entry as the API shows it (camelCase). */
export function whitelistView(r: WhitelistEntry) {
  return {
    address: r.address,
    label: r.label,
    usableAt: iso(r.usableAt),
    usable: new Date(r.usableAt).getTime() <= Date.now(),
    createdAt: iso(r.createdAt),
  }
}
export type WhitelistView = ReturnType<typeof whitelistView>
