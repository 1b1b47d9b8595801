/**
 * Diagnostic: the cost of the agent-and-actor read (an agent of an account, its actor's status,
 * its effective policy and payout wallet) written three ways, one connection, sequential.
 * The figures are quoted in src/adapters/db/agents.repository.ts.
 *
 *   node bench/experiments/agentRead.ts     (BENCH_PROBE_OPS=2000 by default)
 */
import { randomUUID } from 'node:crypto'
import { openDatabase } from '../../src/adapters/db/orm.ts'
import { createLogger } from '../../src/logger.ts'
import { createActorRuntime } from '../../src/actors/runtime/actorRuntime.ts'
import { agentKind } from '../../src/actors/agent/agent.machine.ts'
import { createAgentActors } from '../../src/actors/agent/agentActors.ts'
import { createAgent } from '../../src/domain/agents/createAgent.ts'
import { createAgentsRepository } from '../../src/adapters/db/agents.repository.ts'
import { withTransaction } from '../../src/adapters/db/transaction.ts'
import { AgentSchema } from '../../src/domain/agents/agent.entity.ts'
import { effectivePayoutSql, effectivePolicySql, pendingChangesSql } from '../../src/adapters/db/effectiveGuardrails.sql.ts'
import { createDatabase, dropAllDatabases, round } from '../lib.ts'

const OPS = Number(process.env.BENCH_PROBE_OPS ?? 2000)
const logger = createLogger({ level: 'warn' })

async function measure(name: string, fn: () => Promise<unknown>) {
  for (let i = 0; i < 200; i++) await fn()
  const t0 = performance.now()
  for (let i = 0; i < OPS; i++) await fn()
  return { name, msPerRead: round((performance.now() - t0) / OPS, 3) }
}

const url = await createDatabase(`bench_agent_read_${process.pid}`)
try {
  const db = await openDatabase({ url, poolSize: 1, logger })
  const accountId = randomUUID()
  await db.pool.query(`insert into account (id, name) values ($1, 'probe')`, [accountId])
  const runtime = createActorRuntime({ pool: db.pool, kinds: [agentKind], logger })
  const repo = createAgentsRepository({ pool: db.pool })
  const { id } = await createAgent(
    {
      agents: repo, actors: createAgentActors({ runtime }),
      withTransaction: (fn) => withTransaction(db.pool, fn), newId: randomUUID,
      createWallet: (agentId) => ({ address: `0x${agentId.replaceAll('-', '').padEnd(40, '0')}`, encryptedKey: 'probe' }),
    },
    { accountId, name: 'probe', model: 'gpt-4o-mini', skills: ['trading'] },
  )
  const sql = `select a.*, ${effectivePayoutSql('a')} as eff_payout, ${effectivePolicySql('a')} as eff_policy, x.status,
    ${pendingChangesSql('a')} as pending from agent a join actor x on x.id = a.id::text where a.id = ? and a.account_id = ?`
  const results = [
    await measure('repository.getOwned (prepared statement on the pool)', () => repo.getOwned(accountId, id)),
    await measure('same statement through MikroORM em.execute', () => db.orm.em.fork().execute(sql, [id, accountId])),
    await measure('em.findOne(Agent) + a second query for actor and pending changes', async () => {
      const em = db.orm.em.fork()
      const a = await em.findOne(AgentSchema, { id, accountId })
      await em.execute(
        `select x.status, ${effectivePayoutSql('a')} as eff_payout, ${effectivePolicySql('a')} as eff_policy, ${pendingChangesSql('a')} as pending
           from agent a join actor x on x.id = a.id::text where a.id = ?`,
        [a!.id],
      )
    }),
  ]
  process.stdout.write(`${JSON.stringify({ ops: OPS, results }, null, 1)}\n`)
  await runtime.stop()
  await db.close()
} finally {
  await dropAllDatabases()
}
