import { Migration } from '@mikro-orm/migrations'
import { contextIndexSql } from '../../../runtime/schema/indexSql.ts'

/**
 * Copy trading (`kind: "mirror"`, docs/api.md "Automations"):
 * - `agent.allow_copy`: the owner lets other accounts' mirrors copy this (public) agent's swaps.
 * - A trigger on `actor`: when a swap wallet operation turns `confirmed`, every live mirror
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
    this.addSql(`
create function mirror_leader_swap() returns trigger language plpgsql as $fn$
declare
  ctx jsonb := new.snapshot->'context';
  p jsonb := ctx->'params';
  swap jsonb;
begin
  swap := jsonb_build_object(
    'id', new.id,
    'tokenIn', case when (p #>> '{tokenInInfo,native}')::boolean then 'ETH' else p->>'tokenIn' end,
    'tokenOut', case when (p #>> '{tokenOutInfo,native}')::boolean then 'ETH' else p->>'tokenOut' end,
    'symbolIn', p #>> '{tokenInInfo,symbol}', 'symbolOut', p #>> '{tokenOutInfo,symbol}',
    'decimalsIn', (p #>> '{tokenInInfo,decimals}')::int, 'amountIn', p->>'amountIn', 'valueInUsd', coalesce(p->>'valueInUsd', '0'),
    'txHash', ctx->>'txHash', 'confirmedAt', to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
  insert into actor_inbox (actor_id, account_id, event, dedupe_key)
  select m.id, m.account_id, jsonb_build_object('type', 'automation.trigger', 'source', jsonb_build_object('source', 'leader_swap', 'swap', swap)),
         'mirror:' || m.id || ':' || new.id
    from actor m
   where m.kind = 'automation' and m.status in ('armed', 'executing')
     and m.snapshot->'context'->'trigger'->>'type' = 'leader_swap'
     and m.snapshot->'context'->'trigger'->>'leaderAgentId' = ctx->>'agentId'
  on conflict (dedupe_key) do nothing;
  return null;
end
$fn$;
create trigger mirror_leader_swap after update of status on actor for each row
  when (new.kind = 'walletop' and new.status = 'confirmed' and old.status is distinct from new.status
        and new.snapshot #>> '{context,kind}' = 'swap') execute function mirror_leader_swap();
`)
  }

  override down(): void {
    this.addSql(`
drop trigger if exists mirror_leader_swap on actor;
drop function if exists mirror_leader_swap();
drop index if exists actor_mirror_leader;
alter table agent drop column if exists allow_copy;
`)
  }
}
