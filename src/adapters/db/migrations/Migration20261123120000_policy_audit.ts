import { Migration } from '@mikro-orm/migrations'

/**
 * Guardrail changes: the audit trail gains who made a change (a key or a session), the values
 * before and after, and when the change takes effect; `agent_pending_change` holds the parts of
 * policy and payout-wallet changes that loosen protection until their hold has passed (one row
 * per field: a later change of a field replaces its pending one).
 */
export class Migration20261123120000_policy_audit extends Migration {
  override name = 'Migration20261123120000_policy_audit'
  override up(): void {
    this.addSql(`
alter table audit_log
  add column actor jsonb,
  add column before jsonb,
  add column after jsonb,
  add column effective_at timestamptz;
create index audit_log_account_subject on audit_log(account_id, subject_id, id);

create table agent_pending_change (
  agent_id uuid not null references agent(id) on delete cascade,
  field text not null,
  value jsonb not null,
  effective_at timestamptz not null,
  created_at timestamptz not null default now(),
  primary key (agent_id, field)
);
`)
  }
}
