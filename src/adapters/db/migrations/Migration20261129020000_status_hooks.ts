import { Migration } from '@mikro-orm/migrations'
import { dropActorTriggerSql, statusHookSql } from '../../../actors/runtime/index.ts'
import { ACCOUNT_EVENT_HOOK, ACCOUNT_EVENT_ON_STATUS } from './Migration20261127190000_webhooks.ts'
import { ACCOUNT_EVENT_ON_LOW_BALANCE, LOW_BALANCE_HOOK } from './Migration20261127230000_more_account_events.ts'
import { MIRROR_HOOK, MIRROR_ON_LEADER_SWAP } from './Migration20261128020000_mirror.ts'
import { ACCOUNT_EVENT_ON_APPROVAL_V2 } from './Migration20261128030000_launch_approvals.ts'

/** The triggers the service once put on `actor`, each with its function. */
const OLD_TRIGGERS = [
  { trigger: 'account_event_actor', fn: 'account_event_from_actor' },
  { trigger: 'account_event_approval_requested', fn: 'account_event_from_approval' },
  { trigger: 'account_event_approval_decided', fn: 'account_event_from_approval' },
  { trigger: 'account_event_low_balance', fn: 'account_event_low_balance' },
  { trigger: 'mirror_leader_swap', fn: 'mirror_leader_swap' },
]

/**
 * The service's writes on an actor's status change move from its own triggers on `actor` to the
 * runtime's status hooks (src/actors/runtime/schema/statusHooks.ts): account events (an actor's status
 * event, approvals requested and decided, an agent's low balance) and a leader's swap sent to its
 * mirrors. The migrations that made the triggers now register the hooks instead, so on a database
 * they made it for, this drops the triggers and registers the hooks in one transaction (no status
 * change between the two goes unheard); on one they did not, it finds nothing to drop and
 * registers the same hooks again. The hooks run in the order of their names, the order the
 * triggers fired in, so the events of one change keep their order.
 */
export class Migration20261129020000_status_hooks extends Migration {
  override name = 'Migration20261129020000_status_hooks'
  override up(): void {
    for (const t of OLD_TRIGGERS) this.addSql(dropActorTriggerSql(t.trigger))
    for (const fn of new Set(OLD_TRIGGERS.map((t) => t.fn))) this.addSql(`drop function if exists ${fn}();`)
    this.addSql(ACCOUNT_EVENT_ON_STATUS)
    this.addSql(ACCOUNT_EVENT_ON_APPROVAL_V2)
    this.addSql(ACCOUNT_EVENT_ON_LOW_BALANCE)
    this.addSql(MIRROR_ON_LEADER_SWAP)
    this.addSql(statusHookSql(ACCOUNT_EVENT_HOOK))
    this.addSql(statusHookSql({ name: 'account_event_approval', kinds: ['walletop', 'launch'], fn: 'account_event_on_approval' }))
    this.addSql(statusHookSql(LOW_BALANCE_HOOK))
    this.addSql(statusHookSql(MIRROR_HOOK))
  }
}
