import type { ActorRuntime } from '../actors/runtime/index.ts'
import type { SwapAgents, SwapPorts } from '../domain/swaps/ports.ts'
import type { SwapParams } from '../domain/swaps/swap.types.ts'
import type { ApprovalPorts } from '../domain/approvals/ports.ts'
import { decideApproval, getApproval, listApprovals, type DecideApprovalInput } from '../domain/approvals/approvals.ts'
import type { ListApprovalsQuery } from '../domain/approvals/approval.schema.ts'
import { recheckSwap } from '../domain/swaps/recheckSwap.ts'
import { DEFAULT_POLICY } from '../domain/agents/policy.ts'
import { createApprovalOperations } from '../actors/walletOp/approvalOps.ts'
import { createPolicyGate } from '../actors/walletOp/policyGate.ts'
import type pg from 'pg'

/**
 * Human approval of money moves (`/approvals`, docs/api.md "Approvals"): list, read, approve,
 * reject. A swap is priced again at approval through the swap ports (absent without a chain:
 * then it is sent as approved and the sender's own simulation refuses a price that moved).
 */
export function approvalUseCases({ pool, runtime, swapAgents, swapPorts }: { pool: pg.Pool; runtime: ActorRuntime; swapAgents: SwapAgents; swapPorts: SwapPorts | undefined }) {
  const deps: ApprovalPorts = {
    operations: createApprovalOperations({ runtime }),
    recheck: swapPorts ? { swap: (params) => recheckSwap(swapPorts, params as SwapParams) } : {},
    policies: createPolicyGate(pool),
    agentPaused: async (accountId, agentId) => ({ ...DEFAULT_POLICY, ...(await swapAgents.forSwap(accountId, agentId))?.policy }).paused,
    agentOwned: async (accountId, agentId) => (await swapAgents.forSwap(accountId, agentId)) !== undefined,
  }
  return {
    listApprovals: (input: { accountId: string; query: ListApprovalsQuery }) => listApprovals(deps, input),
    getApproval: (input: { accountId: string; approvalId: string }) => getApproval(deps, input),
    decideApproval: (input: DecideApprovalInput) => decideApproval(deps, input),
  }
}
