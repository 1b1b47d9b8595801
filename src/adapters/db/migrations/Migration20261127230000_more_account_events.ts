import { Migration } from '@mikro-orm/migrations'
import { dropStatusHookSql, statusHookSql } from '../../../actors/runtime/index.ts'

/** `agent.low_balance` when a wallet operation confirms leaving the wallet short of gas (a status hook). */
export const ACCOUNT_EVENT_ON_LOW_BALANCE = `
create or replace function account_event_on_low_balance(actor_id text, kind text, account_id uuid, old_status text, new_status text, version bigint, context jsonb)
returns void language plpgsql as $fn$
begin
  if old_status is null or new_status <> 'confirmed' or jsonb_typeof(context #> '{result,lowBalance}') is distinct from 'object' then return; end if;
  insert into account_event (id, account_id, type, resource_kind, resource_id, data)
  values ('evt_' || md5('low_balance:' || actor_id), account_id, 'agent.low_balance', 'agent', context->>'agentId',
          jsonb_build_object('agentId', context->>'agentId', 'operationId', actor_id) || (context #> '{result,lowBalance}'))
  on conflict (id) do nothing;
end
$fn$;
`
export const LOW_BALANCE_HOOK = { name: 'account_event_low_balance', kinds: ['walletop'], fn: 'account_event_on_low_balance' }

/**
 * More account events (docs/api.md, "Events"), each written by a trigger on the row whose change
 * causes it, in the same statement, with its `data` fixed then (as market.listing.sold is):
 * - `deposit.credited`: a deposit to the account's deposit address credited (its `deposit` row
 *   turns `credited`, in the transaction that appends the ledger entry);
 * - `guardrail.change_applied` / `guardrail.change_requested`: an agent's policy, payout wallet or
 *   whitelist changed, from its `audit_log` row: applied at once (a tightening, or any change
 *   when the hold is 0), or waiting for the hold until `effectiveAt` (a loosening);
 * - `credits.low`: the account's credit balance fell below 200 credits (0.20 USD), once per
 *   crossing (a top-up above it and a new fall send it again);
 * - `agent.low_balance`: a wallet operation confirmed leaving the agent's wallet less ETH than
 *   gas needs (its result's `lowBalance`, src/actors/walletOp/walletOp.effects.ts), by a status
 *   hook (src/actors/runtime/schema/statusHooks.ts) on the operation's change to `confirmed`.
 */
export class Migration20261127230000_more_account_events extends Migration {
  override name = 'Migration20261127230000_more_account_events'
  override up(): void {
    this.addSql(`
create function account_event_from_deposit() returns trigger language plpgsql as $fn$
begin
  insert into account_event (id, account_id, type, resource_kind, resource_id, data)
  values ('evt_' || md5('deposit:' || new.chain_id || ':' || new.tx_hash || ':' || new.log_index), new.account_id, 'deposit.credited', 'deposit',
          new.tx_hash || ':' || new.log_index,
          jsonb_build_object('chainId', new.chain_id, 'txHash', new.tx_hash, 'logIndex', new.log_index, 'asset', new.asset,
            'amountBaseUnits', new.amount::text, 'credits', new.credits, 'usdValue', round(new.usd_value, 2)::text,
            'blockNumber', new.block_number::text, 'creditedAt', new.credited_at))
  on conflict (id) do nothing;
  return null;
end
$fn$;
create trigger account_event_deposit_credited after update of status on deposit for each row
  when (old.status is distinct from new.status and new.status = 'credited') execute function account_event_from_deposit();

create function account_event_from_guardrail() returns trigger language plpgsql as $fn$
declare
  held boolean := new.effective_at is not null and new.effective_at > new.at;
begin
  insert into account_event (id, account_id, type, resource_kind, resource_id, data)
  values ('evt_' || md5('audit:' || new.id), new.account_id,
          case when held then 'guardrail.change_requested' else 'guardrail.change_applied' end, 'agent', new.subject_id,
          jsonb_build_object('agentId', new.subject_id, 'change', new.action, 'before', new.before, 'after', new.after,
            'effectiveAt', new.effective_at, 'at', new.at, 'by', new.actor))
  on conflict (id) do nothing;
  return null;
end
$fn$;
create trigger account_event_guardrail after insert on audit_log for each row
  when (new.action in ('policy.change', 'payout_wallet.change', 'whitelist.add', 'whitelist.remove')) execute function account_event_from_guardrail();

create function account_event_credits_low() returns trigger language plpgsql as $fn$
begin
  insert into account_event (id, account_id, type, resource_kind, resource_id, data)
  values ('evt_' || md5('credits.low:' || new.id || ':' || txid_current()), new.id, 'credits.low', 'account', new.id::text,
          jsonb_build_object('credits', new.credits, 'creditsReserved', new.credits_reserved, 'threshold', 200))
  on conflict (id) do nothing;
  return null;
end
$fn$;
create trigger account_event_credits_low after update of credits on account for each row
  when (old.credits >= 200 and new.credits < 200) execute function account_event_credits_low();

`)
    this.addSql(ACCOUNT_EVENT_ON_LOW_BALANCE)
    this.addSql(statusHookSql(LOW_BALANCE_HOOK))
  }

  override down(): void {
    this.addSql(dropStatusHookSql(LOW_BALANCE_HOOK.name))
    this.addSql(`
drop function if exists account_event_on_low_balance(text, text, uuid, text, text, bigint, jsonb);
drop trigger if exists account_event_credits_low on account;
drop function if exists account_event_credits_low();
drop trigger if exists account_event_guardrail on audit_log;
drop function if exists account_event_from_guardrail();
drop trigger if exists account_event_deposit_credited on deposit;
drop function if exists account_event_from_deposit();
`)
  }
}
