import { Migration } from '@mikro-orm/migrations'

/**
 * Accounts, keys, sessions and agents. The durable actor runtime's tables were made here too
 * until the runtime owned its schema: they are the runtime's own migrations now
 * (src/actors/runtime/schema/), run before these.
 */
export class Migration20261122000001_init extends Migration {
  override name = 'Migration20261122000001_init'

  override up(): void {
    this.addSql(`
create table account (
  id uuid primary key,
  name text not null,
  address text unique,
  is_operator boolean not null default false,
  credits bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table api_key (
  id uuid primary key,
  account_id uuid not null references account(id) on delete cascade,
  name text not null,
  hash text not null unique,
  hint text not null,
  scopes text[] not null,
  expires_at timestamptz,
  last_used_at timestamptz,
  created_at timestamptz not null default now()
);
create index api_key_account on api_key(account_id, created_at desc, id desc);

create table siwe_nonce (
  nonce text primary key,
  expires_at timestamptz not null
);

create table session (
  id_hash text primary key,
  account_id uuid not null references account(id) on delete cascade,
  csrf_token text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);

create table agent (
  id uuid primary key,
  account_id uuid not null references account(id) on delete cascade,
  name text not null,
  model text not null,
  skills text[] not null,
  system_prompt text,
  payout_wallet text,
  persona text,
  strategy text,
  temperature double precision,
  is_public boolean not null default false,
  public_description text,
  policy jsonb not null default '{}',
  wallet_address text not null unique,
  wallet_key_encrypted text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index agent_account on agent(account_id, created_at desc, id desc);

create table agent_whitelist (
  agent_id uuid not null references agent(id) on delete cascade,
  account_id uuid not null,
  address text not null,
  label text,
  usable_at timestamptz not null,
  created_at timestamptz not null default now(),
  primary key (agent_id, address)
);

create table audit_log (
  id bigserial primary key,
  account_id uuid not null,
  subject_id text not null,
  action text not null,
  data jsonb not null default '{}',
  at timestamptz not null default now()
);
create index audit_log_subject on audit_log(subject_id, id);
`)
  }
}
