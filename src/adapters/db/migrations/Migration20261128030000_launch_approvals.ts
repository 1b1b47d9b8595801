import { Migration } from '@mikro-orm/migrations'
import { statusHookSql } from '../../../actors/runtime/index.ts'
import { ACCOUNT_EVENT_ON_APPROVAL } from './Migration20261127210000_approvals.ts'
import { contextIndexSql, type ContextIndex } from '../../../actors/runtime/index.ts'

/**
 * The approval events of a wallet operation or launch (a status hook): the type follows the new
 * status, requested when an actor enters `awaiting_approval` (created in it or moved to it),
 * decided when it leaves it.
 */
export const ACCOUNT_EVENT_ON_APPROVAL_V2 = `
create or replace function account_event_on_approval(actor_id text, kind text, account_id uuid, old_status text, new_status text, version bigint, context jsonb)
returns void language plpgsql as $fn$
declare
  t text := case when new_status = 'awaiting_approval' then 'approval.requested' else 'approval.decided' end;
begin
  if not (new_status = 'awaiting_approval' or coalesce(old_status = 'awaiting_approval', false)) then return; end if;
  insert into account_event (id, account_id, type, resource_kind, resource_id, detail)
  values ('evt_' || md5(actor_id || ':' || t), account_id, t, 'approval', actor_id,
          jsonb_build_object('status', new_status, 'agentId', context->'agentId',
            'kind', coalesce(context->'kind', to_jsonb(kind)),
            'approval', context->'approval'))
  on conflict (id) do nothing;
end
$fn$;
`

/** `GET /approvals`' index: an account's actors that carry an approval, newest request first. */
const APPROVAL_INDEX = { name: 'actor_approval', leading: ['account_id'], path: ['approval', 'requestedAt'], form: 'brace', descending: true, where: [{ path: ['approval'], is: 'object' }] } satisfies ContextIndex

/**
 * Approvals of launches (docs/api.md, "Approvals"): a self-funded launch whose seed is above the
 * policy's `require_approval_above_usd` waits in `awaiting_approval` as a wallet operation does.
 * A launch actor is created `pending` and enters that state with `launch.begin` (an update), or
 * is created in it (a model's tool call creates it with that outcome): the events' status hook
 * now takes both kinds, and the type of event follows the new status:
 * - `approval.requested` when an actor enters `awaiting_approval` (created in it, or moved to it);
 * - `approval.decided` when it leaves that state.
 * The partial index that serves `GET /approvals` takes launch actors too.
 */
export class Migration20261128030000_launch_approvals extends Migration {
  override name = 'Migration20261128030000_launch_approvals'
  override up(): void {
    this.addSql(ACCOUNT_EVENT_ON_APPROVAL_V2)
    this.addSql(statusHookSql({ name: 'account_event_approval', kinds: ['walletop', 'launch'], fn: 'account_event_on_approval' }))
    this.addSql('drop index if exists actor_approval;')
    this.addSql(contextIndexSql({ ...APPROVAL_INDEX, kind: ['walletop', 'launch'] }))
  }

  override down(): void {
    this.addSql('drop index if exists actor_approval;')
    this.addSql(contextIndexSql({ ...APPROVAL_INDEX, kind: 'walletop' }))
    this.addSql(ACCOUNT_EVENT_ON_APPROVAL)
    this.addSql(statusHookSql({ name: 'account_event_approval', kinds: ['walletop'], fn: 'account_event_on_approval' }))
  }
}
