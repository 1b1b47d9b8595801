import { Migration } from '@mikro-orm/migrations'
import { dropStatusHookSql, statusHookSql } from '../../../actors/runtime/index.ts'
import { actorRowsSql, sendEachSql } from '../../../actors/runtime/index.ts'
import { contextIndexSql } from '../../../actors/runtime/index.ts'

/**
 * A leader's confirmed swap sent to its live mirrors' inboxes (a status hook): the mirrors are
 * read through the runtime's rows (`actorRowsSql`, so `actor_mirror_leader` applies) and sent
 * through its inbox (`sendEachSql`). Unqualified names in its queries are the rows' columns; the
 * arguments are named by the function's name where a query reads them.
 */
export const MIRROR_ON_LEADER_SWAP = `
create or replace function mirror_on_leader_swap(actor_id text, kind text, account_id uuid, old_status text, new_status text, version bigint, context jsonb)
returns void language plpgsql as $fn$
#variable_conflict use_column
declare
  p jsonb := context->'params';
  swap jsonb;
begin
  if old_status is null or new_status <> 'confirmed' or context->>'kind' is distinct from 'swap' then return; end if;
  swap := jsonb_build_object(
    'id', actor_id,
    'tokenIn', case when (p #>> '{tokenInInfo,native}')::boolean then 'ETH' else p->>'tokenIn' end,
    'tokenOut', case when (p #>> '{tokenOutInfo,native}')::boolean then 'ETH' else p->>'tokenOut' end,
    'symbolIn', p #>> '{tokenInInfo,symbol}', 'symbolOut', p #>> '{tokenOutInfo,symbol}',
    'decimalsIn', (p #>> '{tokenInInfo,decimals}')::int, 'amountIn', p->>'amountIn', 'valueInUsd', coalesce(p->>'valueInUsd', '0'),
    'txHash', context->>'txHash', 'confirmedAt', to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
  ${sendEachSql(`select m.id, m.account_id, jsonb_build_object('type', 'automation.trigger', 'source', jsonb_build_object('source', 'leader_swap', 'swap', swap)),
         'mirror:' || m.id || ':' || mirror_on_leader_swap.actor_id
    from ${actorRowsSql({ kind: 'automation' })} m
   where m.status in ('armed', 'executing')
     and m.context->'trigger'->>'type' = 'leader_swap'
     and m.context->'trigger'->>'leaderAgentId' = mirror_on_leader_swap.context->>'agentId'`)};
end
$fn$;
`
export const MIRROR_HOOK = { name: 'mirror_leader_swap', kinds: ['walletop'], fn: 'mirror_on_leader_swap' }

/**
 * Copy trading (`kind: "mirror"`, docs/api.md "Automations"):
 * - `agent.allow_copy`: the owner lets other accounts' mirrors copy this (public) agent's swaps.
 * - A status hook (src/actors/runtime/schema/statusHooks.ts): when a swap wallet operation turns `confirmed`, every live mirror
 *   (armed or executing) that follows its agent gets the swap in its inbox, in the same
 *   statement and transaction as the confirmation: never lost on a crash, and never twice (the
 *   inbox row's dedupe key is `mirror:<automation>:<swap>`; the firing's swap is keyed by the same
 *   pair). ETH is named `ETH` (a swap of ETH is held as WETH's address in its params).
 */
export class Migration20261128020000_mirror extends Migration {
  override name = 'Migration20261128020000_mirror'
  override up(): void {
    this.addSql('alter table agent add column if not exists allow_copy boolean not null default false;')
    this.addSql(contextIndexSql({ name: 'actor_mirror_leader', kind: 'automation', path: ['trigger', 'leaderAgentId'], where: [{ path: ['trigger', 'type'], equals: 'leader_swap' }] }))
    this.addSql(MIRROR_ON_LEADER_SWAP)
    this.addSql(statusHookSql(MIRROR_HOOK))
  }

  override down(): void {
    this.addSql(dropStatusHookSql(MIRROR_HOOK.name))
    this.addSql(`
drop function if exists mirror_on_leader_swap(text, text, uuid, text, text, bigint, jsonb);
drop index if exists actor_mirror_leader;
alter table agent drop column if exists allow_copy;
`)
  }
}
