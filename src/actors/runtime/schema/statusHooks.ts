/*
 * Status hooks: what the app writes in the statement that changes an actor's status, without
 * triggers of its own on the runtime's tables. The runtime owns one trigger for inserts and one
 * for status changes; each calls, in the order of their names, the SQL functions the app
 * registered for the actor's kind (`actor_status_hook`), with the change as arguments, never
 * the row itself:
 *
 *   fn(actor_id text, kind text, account_id uuid, old_status text, new_status text, version bigint, context jsonb) returns void
 *
 * `old_status` is null when the actor is created (in `new_status`); `version` is the actor's
 * version after the change; `context` is its machine's context. A hook runs inside the
 * statement that made the change, so what it writes commits or rolls back with it: an account
 * event is never lost on a crash, and never written by a change that did not happen.
 */

/**
 * The second runtime migration: the hooks' registry, the dispatcher the triggers call, and the
 * function that writes the dispatcher from the registry. The dispatcher calls each hook by name
 * with a static `perform` (plpgsql prepares it once per connection), guarded by its kinds: no
 * read of the registry and no dynamic `execute` per row, so a status change costs what the
 * service's own triggers cost before. Registering or dropping a hook writes it again.
 */
export const STATUS_HOOKS_SQL = `
create table if not exists actor_status_hook (
  name text primary key,
  kinds text[] not null,
  fn text not null
);
create or replace function actor_status_hooks_rebuild() returns void language plpgsql as $fn$
declare
  calls text := '';
  h record;
begin
  for h in select name, kinds, fn from actor_status_hook order by name loop
    calls := calls || format(E'  if new.kind = any (%L::text[]) then\n    perform %I(new.id, new.kind, new.account_id, before, new.status, new.version, new.snapshot->''context'');\n  end if;\n', h.kinds, h.fn);
  end loop;
  execute format($def$create or replace function actor_status_hooks() returns trigger language plpgsql as $body$
declare
  before text := case when tg_op = 'UPDATE' then old.status end;
begin
%s  return null;
end
$body$$def$, calls);
end
$fn$;
select actor_status_hooks_rebuild();
drop trigger if exists actor_status_hooks_insert on actor;
drop trigger if exists actor_status_hooks_update on actor;
create trigger actor_status_hooks_insert after insert on actor for each row execute function actor_status_hooks();
create trigger actor_status_hooks_update after update of status on actor for each row
  when (old.status is distinct from new.status) execute function actor_status_hooks();
`

const NAME = /^[a-z_][a-z0-9_]*$/
const KIND = /^[A-Za-z0-9._-]+$/

/**
 * The SQL that registers (or replaces) the status hook `name`: the function `fn` (its name; its
 * signature is the one at the top of this file) is called for every actor of `kinds` created or
 * whose status changes. Hooks run in the order of their names.
 *
 * @example
 * statusHookSql({ name: 'account_event_actor', kinds: ['walletop', 'launch'], fn: 'account_event_on_status' })
 */
export function statusHookSql({ name, kinds, fn }: { name: string; kinds: readonly string[]; fn: string }): string {
  if (!NAME.test(name) || !NAME.test(fn)) throw new Error(`Not a hook or function name: ${name}, ${fn}`)
  if (kinds.length === 0 || !kinds.every((k) => KIND.test(k))) throw new Error(`Not a list of kinds: ${kinds.join(', ')}`)
  return `insert into actor_status_hook (name, kinds, fn) values ('${name}', array[${kinds.map((k) => `'${k}'`).join(', ')}], '${fn}')
  on conflict (name) do update set kinds = excluded.kinds, fn = excluded.fn;
select actor_status_hooks_rebuild();`
}

/** The SQL that removes the status hook `name` (nothing when there is none). */
export function dropStatusHookSql(name: string): string {
  if (!NAME.test(name)) throw new Error(`Not a hook name: ${name}`)
  return `delete from actor_status_hook where name = '${name}';
select actor_status_hooks_rebuild();`
}

/**
 * The SQL that drops a trigger the app put on `actor` before status hooks existed (nothing when
 * there is none): the app's migration that moves it to a hook drops it in the same transaction.
 */
export function dropActorTriggerSql(name: string): string {
  if (!NAME.test(name)) throw new Error(`Not a trigger name: ${name}`)
  return `drop trigger if exists ${name} on actor;`
}
