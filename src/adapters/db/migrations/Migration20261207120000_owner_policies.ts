import { Migration } from '@mikro-orm/migrations'

/**
 * Owners' policies (docs/api.md, "Policies"): one per account (`account_policy`) and one per
 * agent (`agent_owner_policy`), each `{ rules }` as JSON, with the loosening waiting for its hold
 * (`pending`, applying by the database clock at `pending_effective_at`, as an agent's
 * `agent_pending_change` does). An agent's policy is dropped when the agent is sold (listings.repository.ts). A
 * `net_usd_window` criterion of the account sums the account's money moves over a window:
 * `wallet_op_account` serves it. A change journaled as `owner_policy.change` is an account event
 * as a guardrail change is (`guardrail.change_applied`, or `guardrail.change_requested` while it
 * is held), naming its scope: the agent's, or the account's (`agentId` null).
 */
export class Migration20261207120000_owner_policies extends Migration {
  override name = 'Migration20261207120000_owner_policies'
  override up(): void {
    this.addSql(`
create table account_policy (
  account_id uuid primary key references account(id) on delete cascade,
  policy jsonb not null,
  pending jsonb,
  pending_effective_at timestamptz,
  updated_at timestamptz not null default now()
);
create table agent_owner_policy (
  agent_id uuid primary key references agent(id) on delete cascade,
  policy jsonb not null,
  pending jsonb,
  pending_effective_at timestamptz,
  updated_at timestamptz not null default now()
);
create index wallet_op_account on wallet_op (account_id, created_at desc);

create function account_event_from_owner_policy() returns trigger language plpgsql as $fn$
declare
  held boolean := new.effective_at is not null and new.effective_at > new.at;
  of_account boolean := new.subject_id = new.account_id::text;
begin
  insert into account_event (id, account_id, type, resource_kind, resource_id, data)
  values ('evt_' || md5('audit:' || new.id), new.account_id,
          case when held then 'guardrail.change_requested' else 'guardrail.change_applied' end,
          case when of_account then 'account' else 'agent' end, new.subject_id,
          jsonb_build_object('agentId', case when of_account then null else new.subject_id end,
            'scope', case when of_account then 'account' else 'agent' end, 'change', new.action,
            'before', new.before, 'after', new.after, 'effectiveAt', new.effective_at, 'at', new.at, 'by', new.actor))
  on conflict (id) do nothing;
  return null;
end
$fn$;
create trigger account_event_owner_policy after insert on audit_log for each row
  when (new.action = 'owner_policy.change') execute function account_event_from_owner_policy();
`)
  }

  override down(): void {
    this.addSql(`drop trigger if exists account_event_owner_policy on audit_log; drop function if exists account_event_from_owner_policy();
drop index if exists wallet_op_account; drop table if exists agent_owner_policy; drop table if exists account_policy;`)
  }
}
