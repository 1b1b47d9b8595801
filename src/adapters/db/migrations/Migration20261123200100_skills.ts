import { Migration } from '@mikro-orm/migrations'

/**
 * Skills. `agent.run_interval_seconds`: how often a running agent starts a run of its own (0 =
 * never). `custom_skill`: accounts' own skills (data only), unique by (account, slug); the public
 * ones form the registry. The GIN index on `agent.skills` serves the registry's install counts.
 */
export class Migration20261123200100_skills extends Migration {
  override name = 'Migration20261123200100_skills'
  override up(): void {
    this.addSql(`
alter table agent add column run_interval_seconds int not null default 0 check (run_interval_seconds >= 0);

create table custom_skill (
  id uuid primary key,
  account_id uuid not null references account(id) on delete cascade,
  slug text not null,
  name text not null,
  description text not null default '',
  instructions text not null,
  tools text[] not null default '{}',
  parameters jsonb,
  tags text[] not null default '{}',
  is_public boolean not null default false,
  version text not null default '1.0.0',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (account_id, slug)
);
create index custom_skill_account on custom_skill(account_id, created_at desc, id desc);
create index custom_skill_public on custom_skill(created_at desc, id desc) where is_public;
create index custom_skill_tags on custom_skill using gin (tags) where is_public;
create index agent_skills on agent using gin (skills);
`)
  }
}
