import { Migration } from '@mikro-orm/migrations'
import { dropStatusHookSql, statusHookSql } from '../../../actors/runtime/index.ts'

/** The account event of an actor's status change, if it is one (a status hook: its signature is the runtime's). */
export const ACCOUNT_EVENT_ON_STATUS = `
create or replace function account_event_on_status(actor_id text, kind text, account_id uuid, old_status text, new_status text, version bigint, context jsonb)
returns void language plpgsql as $fn$
declare
  ctx jsonb := coalesce(context, '{}'::jsonb);
  t text;
begin
  if old_status is null then return; end if;
  t := case kind
    when 'walletop' then case when ctx->>'kind' in ('swap', 'transfer') and new_status in ('confirmed', 'failed') then (ctx->>'kind') || '.' || new_status end
    when 'launch' then case when new_status in ('live', 'failed') then 'launch.' || new_status end
    when 'run' then case when new_status in ('completed', 'failed') then 'run.' || new_status end
    when 'chatturn' then case when new_status in ('completed', 'failed') then 'chat.turn.' || new_status end
    when 'automation' then case new_status when 'executing' then 'automation.fired' when 'completed' then 'automation.completed' when 'error' then 'automation.failed' end
    when 'agent' then case when new_status = 'paused' then 'agent.paused' end
  end;
  if t is null then return; end if;
  insert into account_event (id, account_id, type, resource_kind, resource_id, detail)
  values ('evt_' || md5(actor_id || ':' || version), account_event_on_status.account_id, t, kind, actor_id,
          jsonb_build_object('status', new_status) || coalesce((select jsonb_object_agg(key, value) from jsonb_each(ctx)
            where key in ('agentId', 'kind', 'opId', 'txHash', 'result', 'error', 'reason')), '{}'::jsonb))
  on conflict (id) do nothing;
end
$fn$;
`
/** The status hook that writes it, for every kind that has account events. */
export const ACCOUNT_EVENT_HOOK = { name: 'account_event_actor', kinds: ['walletop', 'launch', 'run', 'chatturn', 'automation', 'agent'], fn: 'account_event_on_status' }

/**
 * Account events and outbound webhooks (docs/api.md, "Webhooks").
 * - `account_event`: what happened to an account's resources, in commit order (`seq`). An actor's
 *   status change that is an event (a swap confirmed, a launch live, an agent paused, ...) is
 *   recorded by a status hook of the runtime (src/actors/runtime/schema/statusHooks.ts; a trigger on
 *   `actor` until Migration20261129020000_status_hooks), so in the same statement and transaction
 *   as the transition itself: never lost on a crash, never recorded twice (its id is derived from
 *   the actor and the version that made it). `data`, the resource as the API shows it, is filled once when the event
 *   is fanned out to the endpoints (src/adapters/webhooks/dispatcher.ts).
 * - `webhook_endpoint`: an account's HTTPS endpoints, the event types each wants, its signing
 *   secret and, for 24 h after a rotation, the previous one.
 * - `webhook_delivery`: one row per event and endpoint (its id is the `webhook-id` header, the
 *   same on every retry), claimed under a lease with SKIP LOCKED, retried until delivered or dead.
 */
export class Migration20261127190000_webhooks extends Migration {
  override name = 'Migration20261127190000_webhooks'
  override up(): void {
    this.addSql(`
create table account_event (
  seq bigserial primary key,
  id text not null unique,
  account_id uuid not null,
  type text not null,
  resource_kind text,
  resource_id text,
  detail jsonb not null default '{}',
  data jsonb,
  only_endpoint uuid,
  except_endpoint uuid,
  created_at timestamptz not null default now(),
  fanned_out_at timestamptz
);
create index account_event_unfanned on account_event(seq) where fanned_out_at is null;
create index account_event_account on account_event(account_id, seq);

create table webhook_endpoint (
  id uuid primary key,
  account_id uuid not null references account(id) on delete cascade,
  url text not null,
  events text[] not null,
  enabled boolean not null default true,
  description text,
  secret text not null,
  previous_secret text,
  previous_secret_until timestamptz,
  failing_since timestamptz,
  disabled_reason text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_endpoint_account on webhook_endpoint(account_id, created_at);

create table webhook_delivery (
  id text primary key,
  endpoint_id uuid not null references webhook_endpoint(id) on delete cascade,
  account_id uuid not null,
  event_seq bigint not null references account_event(seq) on delete cascade,
  status text not null default 'pending',
  attempts int not null default 0,
  next_attempt_at timestamptz,
  retry_from timestamptz not null default now(),
  last_status_code int,
  last_error text,
  latency_ms int,
  delivered_at timestamptz,
  claimed_by text,
  lease_until timestamptz,
  created_at timestamptz not null default now(),
  unique (endpoint_id, event_seq)
);
create index webhook_delivery_due on webhook_delivery(next_attempt_at) where status in ('pending', 'failed');
create index webhook_delivery_endpoint on webhook_delivery(endpoint_id, event_seq desc);
`)
    this.addSql(ACCOUNT_EVENT_ON_STATUS)
    this.addSql(statusHookSql(ACCOUNT_EVENT_HOOK))
  }

  override down(): void {
    this.addSql(dropStatusHookSql(ACCOUNT_EVENT_HOOK.name))
    this.addSql(`
drop function if exists account_event_on_status(text, text, uuid, text, text, bigint, jsonb);
drop table if exists webhook_delivery;
drop table if exists webhook_endpoint;
drop table if exists account_event;
`)
  }
}
