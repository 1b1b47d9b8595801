import { Migration } from '@mikro-orm/migrations'
import { dropStatusHookSql, statusHookSql } from '../../../actors/runtime/index.ts'
import { contextIndexSql } from '../../../actors/runtime/index.ts'

/** The approval events of a wallet operation (a status hook): requested when created awaiting approval, decided when it leaves that state. */
export const ACCOUNT_EVENT_ON_APPROVAL = `
create or replace function account_event_on_approval(actor_id text, kind text, account_id uuid, old_status text, new_status text, version bigint, context jsonb)
returns void language plpgsql as $fn$
declare
  t text := case when old_status is null then 'approval.requested' else 'approval.decided' end;
begin
  if not (old_status is null and new_status = 'awaiting_approval' or coalesce(old_status = 'awaiting_approval', false)) then return; end if;
  insert into account_event (id, account_id, type, resource_kind, resource_id, detail)
  values ('evt_' || md5(actor_id || ':' || t), account_id, t, 'approval', actor_id,
          jsonb_build_object('status', new_status, 'agentId', context->'agentId', 'kind', context->'kind', 'approval', context->'approval'))
  on conflict (id) do nothing;
end
$fn$;
`

/**
 * Human approval (docs/api.md, "Approvals"). An approval is the `approval` of a wallet operation
 * actor's context (its id is the operation's); nothing else stores it, so it cannot disagree with
 * the operation. Its events are written by a status hook (src/actors/runtime/schema/statusHooks.ts), in
 * the statement that commits the transition, as the other account events are (Migration20261127190000_webhooks):
 * - `approval.requested` when a wallet operation is created in `awaiting_approval`;
 * - `approval.decided` when it leaves that state (approved, rejected, or expired as rejected).
 * The partial index serves `GET /approvals` (an account's operations that carry an approval).
 */
export class Migration20261127210000_approvals extends Migration {
  override name = 'Migration20261127210000_approvals'
  override up(): void {
    this.addSql(ACCOUNT_EVENT_ON_APPROVAL)
    this.addSql(statusHookSql({ name: 'account_event_approval', kinds: ['walletop'], fn: 'account_event_on_approval' }))
    this.addSql(contextIndexSql({ name: 'actor_approval', kind: 'walletop', leading: ['account_id'], path: ['approval', 'requestedAt'], form: 'brace', descending: true, where: [{ path: ['approval'], is: 'object' }] }))
  }

  override down(): void {
    this.addSql(`
drop index if exists actor_approval;
drop function if exists account_event_on_approval(text, text, uuid, text, text, bigint, jsonb);
`)
    this.addSql(dropStatusHookSql('account_event_approval'))
  }
}
