/**
 * Built-in skills (slugs as the reference client knows them) and strategy presets. Skills are
 * data: each names the tools an agent's model may call; the tool registry gives them behaviour.
 */
export type Skill = {
  slug: string
  name: string
  description: string
  /** Granted to every agent whether its `skills` list it or not (read-only skills only). */
  alwaysOn: boolean
  tools: readonly string[]
}
export type StrategyPreset = { slug: string; name: string; description: string; skills: readonly string[] }

export const BUILTIN_SKILLS: readonly Skill[] = [
  { slug: 'trading', name: 'Trading', description: 'Quote and execute swaps within the agent policy.', alwaysOn: false, tools: ['swap_quote', 'swap_execute', 'price'] },
  { slug: 'token-launch', name: 'Token launch', description: 'Preview and launch tokens on venue-a, venue-b or self-funded.', alwaysOn: false, tools: ['launch_preview', 'launch_token', 'launch_status'] },
  { slug: 'portfolio', name: 'Portfolio', description: 'Read holdings valued in USD, cost basis and PnL.', alwaysOn: true, tools: ['portfolio'] },
  { slug: 'market-intelligence', name: 'Market intelligence', description: 'Read the token board, trades, prices and stats.', alwaysOn: false, tools: ['tokens', 'token_trades', 'price', 'stats'] },
  { slug: 'social', name: 'Social', description: 'Write posts and descriptions for launched tokens (text only; nothing is published by the service).', alwaysOn: false, tools: [] },
  { slug: 'sniper', name: 'Sniper', description: 'Watch new launches and buy early under strict limits.', alwaysOn: false, tools: ['automation_create', 'automation_list'] },
  { slug: 'wallet', name: 'Wallet', description: 'Transfers to whitelisted addresses and creator-fee claims.', alwaysOn: false, tools: ['transfer', 'fees_earnings', 'fees_claim'] },
  { slug: 'image-generation', name: 'Image generation', description: 'Describe logos for launches (the server never fetches image URLs).', alwaysOn: false, tools: [] },
]

export const STRATEGY_PRESETS: readonly StrategyPreset[] = [
  { slug: 'monitor-exit', name: 'Monitor and exit', description: 'Hold positions and sell on drawdown or target.', skills: ['trading', 'portfolio'] },
  { slug: 'momentum', name: 'Momentum', description: 'Buy tokens with rising volume, cut losers quickly.', skills: ['trading', 'market-intelligence'] },
  { slug: 'defi-yield', name: 'DeFi yield', description: 'Park idle quote assets and claim creator fees.', skills: ['wallet', 'portfolio'] },
  { slug: 'macro-guard', name: 'Macro guard', description: 'Rotate into USDC or tokenized stocks when the market turns.', skills: ['trading', 'portfolio'] },
  { slug: 'sniper', name: 'Sniper', description: 'Enter new launches early with small, capped sizes.', skills: ['sniper', 'trading'] },
]

export const SKILL_SLUGS = new Set(BUILTIN_SKILLS.map((s) => s.slug))
export const STRATEGY_SLUGS = new Set(STRATEGY_PRESETS.map((s) => s.slug))

/** The preset's skills: what an agent created with this strategy and no skills gets. */
export function presetSkills(strategy: string): string[] {
  return [...(STRATEGY_PRESETS.find((p) => p.slug === strategy)?.skills ?? [])]
}
