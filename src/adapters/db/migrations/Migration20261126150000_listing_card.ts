import { Migration } from '@mikro-orm/migrations'

/**
 * The public card a listing showed when it ended (sold or cancelled): the agent's name, strategy,
 * skills, model, wallet, created time and live launches, and the figures read just before the
 * end (portfolio value, creator fees, cost basis and PnL). GET /market/:id answers an ended
 * listing with it, never with the agent as it is now (the buyer's renames, strategy, holdings).
 * Listings that ended before this migration get the agent's card as it is now, without figures.
 */
export class Migration20261126150000_listing_card extends Migration {
  override name = 'Migration20261126150000_listing_card'
  override up(): void {
    this.addSql(`
alter table listing add column ended_card jsonb;
update listing l set ended_card = jsonb_build_object(
    'name', a.name, 'strategy', a.strategy, 'skills', to_jsonb(a.skills), 'model', a.model, 'walletAddress', a.wallet_address,
    'createdAt', a.created_at, 'launches', 0, 'figures', null)
  from agent a where a.id = l.agent_id and l.status <> 'active';
`)
  }

  override down(): void {
    this.addSql('alter table listing drop column if exists ended_card;')
  }
}
