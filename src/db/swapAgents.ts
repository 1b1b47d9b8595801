import type pg from 'pg'
import type { Address } from 'viem'
import { effectivePolicySql } from '../domain/agents/effectiveGuardrails.ts'
import type { Policy } from '../domain/agents/policy.ts'
import type { SwapAgents } from '../domain/swaps/ports.ts'

/** The agent a swap is from: its wallet, effective policy and actor status, of the account only. */
export function createSwapAgents(pool: pg.Pool): SwapAgents {
  return {
    async forSwap(accountId, agentId) {
      const { rows } = await pool.query<{ wallet_address: Address; policy: Partial<Policy>; status: string }>(
        `select a.wallet_address, ${effectivePolicySql('a')} as policy, x.status from agent a join actor x on x.id = a.id::text
          where a.id = $1 and a.account_id = $2`,
        [agentId, accountId],
      )
      const row = rows[0]
      return row && { wallet: row.wallet_address, policy: row.policy, status: row.status }
    },
  }
}
