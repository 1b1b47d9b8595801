import { Migration20261122000001_init } from './Migration20261122000001_init.ts'
import { Migration20261122000002_chain } from './Migration20261122000002_chain.ts'
import { Migration20261122000003_indexer } from './Migration20261122000003_indexer.ts'
import { Migration20261122000004_walletops } from './Migration20261122000004_walletops.ts'
import { Migration20261122000005_quotes } from './Migration20261122000005_quotes.ts'
import { Migration20261122000006_quotes_unlogged } from './Migration20261122000006_quotes_unlogged.ts'
import { Migration20261123000007_received_tokens } from './Migration20261123000007_received_tokens.ts'
import { Migration20261123000008_quote_single_use } from './Migration20261123000008_quote_single_use.ts'
import { Migration20261123120000_effect_lease } from './Migration20261123120000_effect_lease.ts'
import { Migration20261123120000_policy_audit } from './Migration20261123120000_policy_audit.ts'
import { Migration20261123150000_credits } from './Migration20261123150000_credits.ts'
import { Migration20261123160000_deposits } from './Migration20261123160000_deposits.ts'
import { Migration20261123200000_chat } from './Migration20261123200000_chat.ts'
import { Migration20261123200100_skills } from './Migration20261123200100_skills.ts'
import { Migration20261125110000_automations } from './Migration20261125110000_automations.ts'
import { Migration20261123210000_runs } from './Migration20261123210000_runs.ts'
import { Migration20261125100000_market } from './Migration20261125100000_market.ts'
import { Migration20261125110000_ops_console } from './Migration20261125110000_ops_console.ts'
import { Migration20261125130000_shards } from './Migration20261125130000_shards.ts'
import { Migration20261125100000_market_intel } from './Migration20261125100000_market_intel.ts'
import { Migration20261125130000_transfers_in } from './Migration20261125130000_transfers_in.ts'
import { Migration20261126120000_automation_triggers } from './Migration20261126120000_automation_triggers.ts'

/** Every migration, in order. Listed explicitly so they run the same under Node and vitest. */
export const migrations = [
  { name: 'Migration20261122000001_init', class: Migration20261122000001_init },
  { name: 'Migration20261122000002_chain', class: Migration20261122000002_chain },
  { name: 'Migration20261122000003_indexer', class: Migration20261122000003_indexer },
  { name: 'Migration20261122000004_walletops', class: Migration20261122000004_walletops },
  { name: 'Migration20261122000005_quotes', class: Migration20261122000005_quotes },
  { name: 'Migration20261122000006_quotes_unlogged', class: Migration20261122000006_quotes_unlogged },
  { name: 'Migration20261123000007_received_tokens', class: Migration20261123000007_received_tokens },
  { name: 'Migration20261123000008_quote_single_use', class: Migration20261123000008_quote_single_use },
  { name: 'Migration20261123120000_effect_lease', class: Migration20261123120000_effect_lease },
  { name: 'Migration20261123120000_policy_audit', class: Migration20261123120000_policy_audit },
  { name: 'Migration20261123150000_credits', class: Migration20261123150000_credits },
  { name: 'Migration20261123160000_deposits', class: Migration20261123160000_deposits },
  { name: 'Migration20261123200000_chat', class: Migration20261123200000_chat },
  { name: 'Migration20261123200100_skills', class: Migration20261123200100_skills },
  { name: 'Migration20261123210000_runs', class: Migration20261123210000_runs },
  { name: 'Migration20261125100000_market', class: Migration20261125100000_market },
  { name: 'Migration20261125100000_market_intel', class: Migration20261125100000_market_intel },
  { name: 'Migration20261125110000_automations', class: Migration20261125110000_automations },
  { name: 'Migration20261125110000_ops_console', class: Migration20261125110000_ops_console },
  { name: 'Migration20261125130000_shards', class: Migration20261125130000_shards },
  { name: 'Migration20261125130000_transfers_in', class: Migration20261125130000_transfers_in },
  { name: 'Migration20261126120000_automation_triggers', class: Migration20261126120000_automation_triggers },
]
