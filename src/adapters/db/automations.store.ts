import type pg from 'pg'
import type { Queryable } from '../../domain/billing/ports.ts'
import { COUNTED_SQL } from './walletOp.store.ts'
import { actorRowsSql, tellMatching } from '../../actors/runtime/index.ts'

type Db = Queryable

/** An automation's actor row as the lists and the trigger sources read it. */
export type AutomationRow = { id: string; account_id: string; status: string; ctx: Record<string, unknown>; created_at: Date | string; updated_at: Date | string; cursor_at: string }

/** The runtime's actor rows (src/actors/runtime/sqlApi.ts): automations, and any actor. */
const AUTOMATIONS = actorRowsSql({ kind: 'automation' })
const ACTORS = actorRowsSql()
const SELECT = `select id, account_id, status, context as ctx, created_at, updated_at, created_at::text as cursor_at from ${AUTOMATIONS} a`

/**
 * Automations are actors (kind `automation`); their definition and state live in the actor's
 * snapshot. These reads serve the lists (an agent's automations, newest first: index
 * `actor_automation_agent`) and the trigger sources (armed automations of running agents by
 * trigger type: index `actor_automation_status`).
 */
export function createAutomationsStore(pool: pg.Pool) {
  return {
    /** The account's automations, newest first, after the cursor (created_at, id). */
    async list(q: { accountId: string; agentId?: string | undefined; status?: string | undefined; kind?: string | undefined; limit: number; after?: { at: string; id: string } | undefined }) {
      const { rows } = await pool.query<AutomationRow>(
        `${SELECT} where account_id = $1
           and ($2::text is null or context->>'agentId' = $2)
           and ($3::text is null or status = $3)
           and ($4::timestamptz is null or (created_at, id) < ($4, $5))
           and ($7::text is null or context->>'kind' = $7)
         order by created_at desc, id desc limit $6`,
        [q.accountId, q.agentId ?? null, q.status ?? null, q.after?.at ?? null, q.after?.id ?? '', q.limit, q.kind ?? null],
      )
      return rows
    },

    /** One automation's row, whoever owns it (the caller checks the account). */
    async get(id: string): Promise<AutomationRow | undefined> {
      const { rows } = await pool.query<AutomationRow>(`${SELECT} where id = $1`, [id])
      return rows[0]
    },

    /**
     * Automations with this trigger type, in one of `statuses`, whose agent is running: what a
     * new block or a launch may fire (an automation of a stopped agent never fires). `version`:
     * the actor's, which every change of its state moves. `ctx` holds only what the feed reads of
     * the context: its `trigger` and a trailing stop's `high`.
     */
    async ofRunningAgents(triggerTypes: ReadonlyArray<'price_threshold' | 'new_launch' | 'trailing_stop' | 'bracket'>, statuses: readonly string[]): Promise<Array<AutomationRow & { version: string }>> {
      const { rows } = await pool.query<AutomationRow & { version: string }>(
        `select a.id, a.account_id, a.status, jsonb_build_object('trigger', a.context->'trigger', 'high', a.context->'high') as ctx,
                a.created_at, a.updated_at, a.created_at::text as cursor_at, a.version::text as version
           from ${AUTOMATIONS} a join ${ACTORS} g on g.id = a.context->>'agentId' and g.kind = 'agent' and g.status = 'running'
          where a.status = any($2::text[]) and a.context->'trigger'->>'type' = any($1::text[])`,
        [triggerTypes, statuses],
      )
      return rows
    },

    /**
     * The last block the trigger feed evaluated on this chain; a chain seen for the first time
     * starts at `indexedTo` (blocks indexed before there was a feed are history).
     */
    async triggerCheckpoint(chainId: number, indexedTo: number): Promise<number> {
      // One statement per pass, writing only the first time: the row as it stood, else the one just inserted.
      const { rows } = await pool.query<{ block_number: string }>(
        `with inserted as (
           insert into automation_trigger_checkpoint (chain_id, block_number) values ($1, $2) on conflict do nothing returning block_number
         )
         select block_number from inserted union all select block_number from automation_trigger_checkpoint where chain_id = $1`,
        [chainId, indexedTo],
      )
      return Number(rows[0]!.block_number)
    },

    /** The feed evaluated blocks (from, to]: its checkpoint moves to `to`, unless a reorg moved it back meanwhile. */
    async advanceTriggerCheckpoint(chainId: number, from: number, to: number): Promise<void> {
      await pool.query(`update automation_trigger_checkpoint set block_number = $3, updated_at = now() where chain_id = $1 and block_number = $2`, [chainId, from, to])
    },

    /** A mirror's leader, whichever account's: its account, whether it is public and allows copying, its actor's status. */
    async mirrorLeader(agentId: string): Promise<{ accountId: string; isPublic: boolean; allowCopy: boolean; status: string } | undefined> {
      const { rows } = await pool.query<{ accountId: string; isPublic: boolean; allowCopy: boolean; status: string }>(
        `select a.account_id as "accountId", a.is_public as "isPublic", a.allow_copy as "allowCopy", x.status
           from agent a join ${ACTORS} x on x.id = a.id::text where a.id = $1`,
        [agentId],
      )
      return rows[0]
    },

    /** Every live mirror (not completed or cancelled) as follower -> leader agent ids (index `actor_mirror_leader`). */
    async mirrorEdges(): Promise<Array<{ follower: string; leader: string }>> {
      const { rows } = await pool.query<{ follower: string; leader: string }>(
        `select distinct context->>'agentId' as follower, context->'trigger'->>'leaderAgentId' as leader from ${AUTOMATIONS} a
          where context->'trigger'->>'type' = 'leader_swap' and status not in ('completed', 'cancelled')`,
      )
      return rows
    },

    /** The first actor there is among `ids` (the ids a firing's child or run may have): what an earlier attempt of the firing started. */
    async startedAmong(ids: readonly string[]): Promise<{ id: string; status: string } | undefined> {
      const { rows } = await pool.query<{ id: string; status: string }>(`select id, status from ${ACTORS} x where id = any($1::text[]) order by created_at limit 1`, [ids])
      return rows[0]
    },

    /** Why the automation may start no more runs (its max_spend_usd is spent), or null. */
    spentBudgetRefusal: (automationId: string) => spentBudgetRefusal(pool, automationId),

    /** Tells each of the agent's automations that have not ended: one statement, whatever their number. */
    tellAgentAutomations: (p: { agentId: string; event: { type: string }; dedupePrefix: string }) => tellAgentAutomations(pool, p),

    /**
     * Of `mints` (symbols or addresses), the launched tokens the index follows (`tracked`: their
     * trades are recorded) and those of them traded in blocks (from, to] (`traded`), in lower case:
     * the trigger feed reads again only the prices that may have moved.
     */
    async tradedAmong(mints: readonly string[], from: number, to: number): Promise<{ tracked: Set<string>; traded: Set<string> }> {
      const { rows } = await pool.query<{ address: string; traded: boolean }>({
        name: 'automation.traded_among',
        text: `select t.address, exists (select 1 from trade x where x.token_address = t.address and x.block_number > $2 and x.block_number <= $3) as traded
                 from token t where t.address = any($1::text[])`,
        values: [mints.map((m) => m.toLowerCase()), from, to],
      })
      return { tracked: new Set(rows.map((r) => r.address)), traded: new Set(rows.filter((r) => r.traded).map((r) => r.address)) }
    },

    /** Tokens launched in blocks (from, to]: what a sniper may buy. */
    async launchedBetween(from: number, to: number): Promise<Array<{ address: string; symbol: string; venue: string; quote_symbol: string; creator_address: string }>> {
      const { rows } = await pool.query(
        `select address, symbol, venue, quote_symbol, creator_address from token where block_number > $1 and block_number <= $2 order by block_number, address`,
        [from, to],
      )
      return rows
    },
  }
}
export type AutomationsStore = ReturnType<typeof createAutomationsStore>

/**
 * Refuses a wallet operation that would take its automation's spend over `maxSpendUsd` over the
 * automation's life. The budget's owner is the operation's parent when that is an automation (a
 * `tool_call` firing), or the automation that started the parent when that is a run (an
 * `agent_prompt` firing: the run's context names it, `automationId`). The spend is every
 * operation of that automation and of the runs it started (index `actor_run_automation`); failed
 * ones do not count. One statement, called under the agent's lock with the daily cap's check:
 * the automation, its runs and their operations are all that agent's, so two firings (or a
 * firing and a run's swap) cannot both pass it. Answers the refusal's message, or null when it
 * fits (or the parent has no budget).
 */
export async function parentBudgetRefusal(db: Db, { parentId, opId, usdValue }: { parentId: string; opId: string; usdValue: string }): Promise<string | null> {
  const r = await budgetOf(db, parentId, opId)
  if (!r?.max) return null
  if (Number(r.spent) + Number(usdValue) <= Number(r.max) + 1e-9) return null
  return `This move (${usdValue} USD) would take the automation's spend to ${(Number(r.spent) + Number(usdValue)).toFixed(2)} USD, over its max_spend_usd of ${r.max}.`
}

/**
 * The budget of the automation that owns `parentId`'s moves (see parentBudgetRefusal): its
 * `maxSpendUsd` (null: none) and what its moves and its runs' moves spent, `opId` left out.
 */
async function budgetOf(db: Db, parentId: string, opId: string): Promise<{ max: string | null; spent: string } | undefined> {
  const { rows } = await db.query<{ max: string | null; spent: string }>(
    `with owner as (
       select a.id, a.context->>'maxSpendUsd' as max
         from ${ACTORS} p join ${AUTOMATIONS} a
           on a.id = case p.kind when 'automation' then p.id when 'run' then p.context->>'automationId' end
        where p.id = $1
     )
     select o.max,
            (select coalesce(sum(w.usd_value), 0)::text from wallet_op w left join ${ACTORS} x on x.id = w.id
              where w.id <> $2 and ${COUNTED_SQL}
                and w.parent_id in (select o.id union all select r.id from ${actorRowsSql({ kind: 'run' })} r where r.context->>'automationId' = o.id)) as spent
       from owner o`,
    [parentId, opId],
  )
  return rows[0]
}

/**
 * Why an automation may not start another run (an `agent_prompt` firing): its `max_spend_usd`
 * is spent, by its own moves and its runs'. Null while some of it is left, or with no budget.
 */
export async function spentBudgetRefusal(db: Db, automationId: string): Promise<string | null> {
  const r = await budgetOf(db, automationId, '')
  if (!r?.max || Number(r.spent) < Number(r.max) - 1e-9) return null
  return `The automation has spent ${Number(r.spent).toFixed(2)} USD of its max_spend_usd of ${r.max}: no run is started.`
}

/**
 * Puts `event` in the inbox of each of the agent's automations that have not ended (the agent
 * started, was deleted, or was sold), in one statement, deduplicated by `<dedupePrefix>:<id>`,
 * through the runtime's `tellMatching`; the runtime's inbox poll delivers them. Answers how many
 * were told.
 */
export function tellAgentAutomations(db: Db, { agentId, event, dedupePrefix }: { agentId: string; event: { type: string }; dedupePrefix: string }): Promise<number> {
  return tellMatching(db, { kind: 'automation', named: { key: 'agentId', value: agentId }, statusNotIn: ['completed', 'cancelled'], event, dedupePrefix })
}
