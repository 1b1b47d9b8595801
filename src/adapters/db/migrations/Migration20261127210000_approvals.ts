import { Migration } from '@mikro-orm/migrations'
import { contextIndexSql } from '../../../runtime/schema/indexSql.ts'

/**
 * Human approval (docs/api.md, "Approvals"). An approval is the `approval` of a wallet operation
 * actor's context (its id is the operation's); nothing else stores it, so it cannot disagree with
 * the operation. Its events are written by triggers on `actor`, in the statement that commits
 * the transition, as the other account events are (Migration20261127190000_webhooks):
 * - `approval.requested` when a wallet operation is created in `awaiting_approval`;
 * - `approval.decided` when it leaves that state (approved, rejected, or expired as rejected).
 * The partial index serves `GET /approvals` (an account's operations that carry an approval).
 */
export class Migration20261127210000_approvals extends Migration {
  override name = 'Migration20261127210000_approvals'
  override up(): void {
    this.addSql(`
create function account_event_from_approval() returns trigger language plpgsql as $fn$
declare
  t text := case when tg_op = 'INSERT' then 'approval.requested' else 'approval.decided' end;
begin
  insert into account_event (id, account_id, type, resource_kind, resource_id, detail)
  values ('evt_' || md5(new.id || ':' || t), new.account_id, t, 'approval', new.id,
          jsonb_build_object('status', new.status, 'agentId', new.snapshot #> '{context,agentId}', 'kind', new.snapshot #> '{context,kind}',
            'approval', new.snapshot #> '{context,approval}'))
  on conflict (id) do nothing;
  return null;
end
$fn$;
create trigger account_event_approval_requested after insert on actor for each row
  when (new.kind = 'walletop' and new.status = 'awaiting_approval') execute function account_event_from_approval();
create trigger account_event_approval_decided after update of status on actor for each row
  when (old.status = 'awaiting_approval' and new.status is distinct from old.status) execute function account_event_from_approval();
`)
    this.addSql(contextIndexSql({ name: 'actor_approval', kind: 'walletop', leading: ['account_id'], path: ['approval', 'requestedAt'], form: 'brace', descending: true, where: [{ path: ['approval'], is: 'object' }] }))
  }

  override down(): void {
    this.addSql(`
drop index if exists actor_approval;
drop trigger if exists account_event_approval_decided on actor;
drop trigger if exists account_event_approval_requested on actor;
drop function if exists account_event_from_approval();
`)
  }
}
