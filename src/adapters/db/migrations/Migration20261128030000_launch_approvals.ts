import { Migration } from '@mikro-orm/migrations'
import { contextIndexSql, type ContextIndex } from '../../../runtime/schema/indexSql.ts'

/** `GET /approvals`' index: an account's actors that carry an approval, newest request first. */
const APPROVAL_INDEX = { name: 'actor_approval', leading: ['account_id'], path: ['approval', 'requestedAt'], form: 'brace', descending: true, where: [{ path: ['approval'], is: 'object' }] } satisfies ContextIndex

/**
 * Approvals of launches (docs/api.md, "Approvals"): a self-funded launch whose seed is above the
 * policy's `require_approval_above_usd` waits in `awaiting_approval` as a wallet operation does.
 * A launch actor is created `pending` and enters that state with `launch.begin` (an update), or
 * is created in it (a model's tool call creates it with that outcome): the events' triggers now
 * take both kinds, and the type of event follows the new status:
 * - `approval.requested` when an actor enters `awaiting_approval` (created in it, or moved to it);
 * - `approval.decided` when it leaves that state.
 * The partial index that serves `GET /approvals` takes launch actors too.
 */
export class Migration20261128030000_launch_approvals extends Migration {
  override name = 'Migration20261128030000_launch_approvals'
  override up(): void {
    this.addSql(`
create or replace function account_event_from_approval() returns trigger language plpgsql as $fn$
declare
  t text := case when new.status = 'awaiting_approval' then 'approval.requested' else 'approval.decided' end;
begin
  insert into account_event (id, account_id, type, resource_kind, resource_id, detail)
  values ('evt_' || md5(new.id || ':' || t), new.account_id, t, 'approval', new.id,
          jsonb_build_object('status', new.status, 'agentId', new.snapshot #> '{context,agentId}',
            'kind', coalesce(new.snapshot #> '{context,kind}', to_jsonb(new.kind)),
            'approval', new.snapshot #> '{context,approval}'))
  on conflict (id) do nothing;
  return null;
end
$fn$;
drop trigger if exists account_event_approval_requested on actor;
drop trigger if exists account_event_approval_decided on actor;
create trigger account_event_approval_requested after insert on actor for each row
  when (new.kind in ('walletop', 'launch') and new.status = 'awaiting_approval') execute function account_event_from_approval();
create trigger account_event_approval_decided after update of status on actor for each row
  when (new.kind in ('walletop', 'launch') and new.status is distinct from old.status
        and (old.status = 'awaiting_approval' or new.status = 'awaiting_approval')) execute function account_event_from_approval();
drop index if exists actor_approval;
`)
    this.addSql(contextIndexSql({ ...APPROVAL_INDEX, kind: ['walletop', 'launch'] }))
  }

  override down(): void {
    this.addSql('drop index if exists actor_approval;')
    this.addSql(contextIndexSql({ ...APPROVAL_INDEX, kind: 'walletop' }))
    this.addSql(`
drop trigger if exists account_event_approval_decided on actor;
create trigger account_event_approval_decided after update of status on actor for each row
  when (old.status = 'awaiting_approval' and new.status is distinct from old.status) execute function account_event_from_approval();
`)
  }
}
