import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { automationUntil } from './support/automations.ts'
import { waitFor } from './support/waitFor.ts'

/**
 * Fuzzed: no operation a reject rule matches is ever signed, whatever path asks for it: a REST
 * request, an MCP tool call, an automation's firing, and an owner's approval of a move that waited
 * (the policy changed while it waited). Random policies (account or agent; reject, accept and
 * require_approval rules over the operation, the initiator, the tokens and the USD value) meet
 * swaps of about 3 or 30 USD. What a reject matches is decided by a matcher written here, apart
 * from the service's; a move it matches must answer `policy_violation` (or fail with it) with no
 * transaction in the agent's outbox (`chain_tx`, where every signed transaction is stored before
 * it is sent), and a move it does not match must not be refused by a policy.
 */
let app: TestApp
let api: Api
let mcp: Api
let agentId: string
const q = (sql: string, params: unknown[] = []) => app.services.pool.query(sql, params).then((r) => r.rows)
/**
 * The transactions signed for the agent so far, once none of its earlier moves is still on its
 * way to the chain (one answered 202 under load, one approved a moment ago): a count taken while
 * one of them signs would blame the move under test.
 */
const signed = async () => {
  const moving = async () => (await q(
    `select count(*)::int as n from actor where kind = 'walletop' and snapshot->'context'->>'agentId' = $1 and status not in ('confirmed', 'failed', 'awaiting_approval')`,
    [agentId],
  ))[0]!.n as number
  await waitFor(async () => (await moving()) === 0, 60_000)
  return (await q('select count(*)::int as n from chain_tx where agent_id = $1', [agentId]))[0]!.n as number
}

type Rule = { name: string; action: 'reject' | 'require_approval' | 'accept'; criteria: Array<Record<string, unknown>> }
type Op = { initiator: 'api_key' | 'automation'; amountIn: '0.001' | '0.01' }

/** About 3 and 30 USD at the reference pool (ETH near 3,000 USD): a 10 USD limit parts them. */
const usdOf = (amountIn: Op['amountIn']) => (amountIn === '0.001' ? 3 : 30)
const criterion = fc.oneof(
  fc.record({ type: fc.constant('operation'), operations: fc.constantFrom(['swap'], ['transfer'], ['swap', 'launch']) }),
  fc.record({ type: fc.constant('initiator'), initiators: fc.constantFrom(['api_key'], ['automation'], ['run', 'chat'], ['api_key', 'automation']) }),
  fc.record({ type: fc.constant('token'), tokens: fc.constantFrom(['ETH'], ['USDC'], ['WETH'], ['DOGE']), side: fc.constantFrom('in', 'out', 'any') }),
  fc.record({ type: fc.constant('usd_value'), operator: fc.constantFrom('gt', 'gte', 'lt', 'lte'), usd: fc.constant('10') }),
)
const rules = (actions: Rule['action'][]) =>
  fc.array(fc.record({ action: fc.constantFrom(...actions), criteria: fc.array(criterion, { maxLength: 3 }) }), { minLength: 1, maxLength: 4 })
    .map((rs) => rs.map((r, i) => ({ name: `rule ${i}`, ...r }) as Rule))

/** The test's own matcher: does a reject rule match this swap of ETH for USDC? */
function rejectMatches(policy: Rule[], op: Op): boolean {
  const usd = usdOf(op.amountIn)
  const holds = (c: Record<string, unknown>) => {
    switch (c.type) {
      case 'operation': return (c.operations as string[]).includes('swap')
      case 'initiator': return (c.initiators as string[]).includes(op.initiator)
      case 'token': {
        const names = (c.tokens as string[]).map((t) => (t === 'WETH' ? 'ETH' : t))
        return (c.side !== 'out' && names.includes('ETH')) || (c.side !== 'in' && names.includes('USDC'))
      }
      case 'usd_value': return ({ gt: usd > 10, gte: usd >= 10, lt: usd < 10, lte: usd <= 10 } as Record<string, boolean>)[c.operator as string]!
      default: throw new Error(`unexpected criterion ${String(c.type)}`)
    }
  }
  return policy.some((r) => r.action === 'reject' && r.criteria.every(holds))
}

async function setPolicy(scope: 'account' | 'agent', policy: Rule[]) {
  await Promise.all([api('PUT', '/policies/account', { rules: [] }), api('PUT', `/agents/${agentId}/policy`, { rules: [] })])
  const res = await api('PUT', scope === 'account' ? '/policies/account' : `/agents/${agentId}/policy`, { rules: policy })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
}

const swapBody = (amountIn: string) => ({ agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn, slippageBps: 500 })
const scope = fc.constantFrom('account' as const, 'agent' as const)
const amount = fc.constantFrom('0.001' as const, '0.01' as const)
const RUNS = Number(process.env.POLICY_FUZZ_RUNS ?? 8)

beforeAll(async () => {
  app = await startTestApp({ WHITELIST_HOLD_SECONDS: '0', AUTOMATION_MIN_INTERVAL_SECONDS: '1' }, { withChain: true })
  const acct = await app.account()
  api = acct.api
  mcp = apiClient(`${app.url}/api`, acct.apiKey)
  const created = await api('POST', '/agents', { name: 'fuzzed', model: 'gpt-4o-mini', skills: ['trading'], policy: { max_trade_usd: '100000', max_daily_usd: '1000000' } })
  agentId = created.body.id
  expect((await api('POST', '/dev/faucet', { agentId, eth: '50', usdc: '0' })).status).toBe(200)
  expect((await api('POST', `/agents/${agentId}/start`)).status).toBe(200)
}, 120_000)
afterAll(async () => {
  console.log(`policy fuzz: ${seen.rejected} moves a reject matched (none signed), ${seen.passed} it did not (none refused by a policy)`)
  await app?.close()
})

/** Checks one move's outcome against the matcher: refused and unsigned, or not refused by a policy. */
const seen = { rejected: 0, passed: 0 }
async function judge(rejected: boolean, before: number, outcome: { code: string | undefined; status: number | string }, what: string, passes: ReadonlyArray<number | string>) {
  if (rejected) {
    seen.rejected++
    expect({ what, code: outcome.code }).toEqual({ what, code: 'policy_violation' })
    expect(await signed()).toBe(before)
  } else {
    seen.passed++
    expect({ what, code: outcome.code, passes: passes.includes(outcome.status) }).toEqual({ what, code: undefined, passes: true })
  }
}

describe('no move a reject rule matches is ever signed', () => {
  it('REST: POST /swap/execute', async () => {
    await fc.assert(fc.asyncProperty(scope, rules(['reject', 'require_approval', 'accept']), amount, async (where, policy, amountIn) => {
      await setPolicy(where, policy)
      const before = await signed()
      const res = await api('POST', '/swap/execute', swapBody(amountIn))
      await judge(rejectMatches(policy, { initiator: 'api_key', amountIn }), before, { code: res.body.code, status: res.status }, `${JSON.stringify(policy)} ${amountIn}: ${JSON.stringify(res.body)}`, [200, 202])
    }), { numRuns: RUNS })
  }, 300_000)

  it('MCP: the swap_execute tool', async () => {
    let n = 0
    await fc.assert(fc.asyncProperty(scope, rules(['reject', 'require_approval', 'accept']), amount, async (where, policy, amountIn) => {
      await setPolicy(where, policy)
      const before = await signed()
      const res = await mcp('POST', '/mcp/call', { name: 'swap_execute', arguments: { agent_id: agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn, slippageBps: 500, confirm: true, idempotencyKey: `fuzz-${n++}` } })
      await judge(rejectMatches(policy, { initiator: 'api_key', amountIn }), before, { code: res.body.code, status: res.status }, `${JSON.stringify(policy)} ${amountIn}: ${JSON.stringify(res.body)}`, [200, 202])
    }), { numRuns: RUNS })
  }, 300_000)

  it("an automation's firing", async () => {
    await fc.assert(fc.asyncProperty(scope, rules(['reject', 'accept']), amount, async (where, policy, amountIn) => {
      await setPolicy(where, policy)
      const body = { agent_id: agentId, name: 'fuzzed dca', kind: 'dca', dca: { tokenIn: 'ETH', tokenOut: 'USDC', amountPerRun: amountIn, everySeconds: 3600, maxRuns: 5 } }
      const created = await api('POST', '/automations', body)
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      const before = await signed()
      expect((await api('POST', `/automations/${created.body.id}/trigger`)).status).toBe(200)
      const done = await automationUntil(api, created.body.id, (a) => a.firings?.some((f: { outcome: string }) => f.outcome !== 'skipped'))
      const firing = done.firings.find((f: { outcome: string }) => f.outcome !== 'skipped')
      expect((await api('DELETE', `/automations/${created.body.id}`)).status).toBe(200)
      const code = firing.outcome === 'failed' ? (String(firing.reason).includes('policy_violation') ? 'policy_violation' : String(firing.reason)) : undefined
      await judge(rejectMatches(policy, { initiator: 'automation', amountIn }), before, { code, status: firing.outcome }, `${JSON.stringify(policy)} ${amountIn}: ${JSON.stringify(firing)}`, ['ok'])
    }), { numRuns: RUNS })
  }, 300_000)

  it('an approval given after the policy changed', async () => {
    await fc.assert(fc.asyncProperty(scope, rules(['reject', 'accept']), amount, async (where, policy, amountIn) => {
      await setPolicy('agent', [{ name: 'ask', action: 'require_approval', criteria: [] }])
      const held = await api('POST', '/swap/execute', swapBody(amountIn))
      expect(held.status, JSON.stringify(held.body)).toBe(202)
      // The new policy keeps the approval rule, so only the reject rules decide at approval.
      const rest = where === 'agent' ? [{ name: 'ask', action: 'require_approval' as const, criteria: [] }, ...policy] : policy
      const res = await api('PUT', where === 'account' ? '/policies/account' : `/agents/${agentId}/policy`, { rules: rest })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      const before = await signed()
      const decided = await api('POST', `/approvals/${held.body.id}/approve`, {})
      expect(decided.status, JSON.stringify(decided.body)).toBe(200)
      const op = decided.body.operation
      await judge(rejectMatches(policy, { initiator: 'api_key', amountIn }), before, { code: op.error?.code, status: op.status }, `${JSON.stringify(policy)} ${amountIn}: ${JSON.stringify(op)}`, ['submitting', 'confirming', 'confirmed'])
      await api('PUT', '/policies/account', { rules: [] })
    }), { numRuns: RUNS })
  }, 300_000)
})
