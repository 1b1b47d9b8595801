import { Migration } from '@mikro-orm/migrations'

/**
 * `market.listing.sold`: recorded for the seller by a trigger on the listing's status, in the
 * sale's own transaction (src/adapters/db/listings.repository.ts settles it), with its data fixed then.
 */
export class Migration20261127200000_listing_sold_event extends Migration {
  override name = 'Migration20261127200000_listing_sold_event'
  override up(): void {
    this.addSql(`
create function account_event_from_listing() returns trigger language plpgsql as $fn$
begin
  insert into account_event (id, account_id, type, resource_kind, resource_id, data)
  values ('evt_' || md5('listing:' || new.id || ':sold'), new.seller_account_id, 'market.listing.sold', 'listing', new.id::text,
          jsonb_build_object('id', new.id, 'agentId', new.agent_id, 'status', new.status, 'priceCredits', new.price_credits,
            'saleCredits', new.sale_credits, 'feeCredits', new.fee_credits, 'endedAt', new.ended_at))
  on conflict (id) do nothing;
  return null;
end
$fn$;
create trigger account_event_listing_sold after update of status on listing for each row
  when (old.status is distinct from new.status and new.status = 'sold') execute function account_event_from_listing();
`)
  }

  override down(): void {
    this.addSql('drop trigger if exists account_event_listing_sold on listing; drop function if exists account_event_from_listing();')
  }
}
