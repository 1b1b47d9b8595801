/**
 * Built-in skills (slugs as the reference client knows them) and strategy presets. Skills are
 * data: each names the tools an agent's model may call; the tool registry gives them behaviour.
 */
export type Skill = { slug: string; name: string; description: string; tools: readonly string[] }
export type StrategyPreset = { slug: string; name: string; description: string; skills: readonly string[] }

export const BUILTIN_SKILLS: readonly Skill[] = [
  { slug: 'trading', name: 'Trading', description: 'Quote and execute swaps within the agent policy.', tools: ['swap_quote', 'swap_execute', 'price'] },
  { slug: 'token-launch', name: 'Token launch', description: 'Preview and launch tokens on venue-a, venue-b or self-funded.', tools: ['launch_preview', 'launch_token', 'launch_status'] },
  { slug: 'portfolio', name: 'Portfolio', description: 'Read holdings valued in USD, cost basis and PnL.', tools: ['portfolio'] },
  { slug: 'market-intelligence', name: 'Market intelligence', description: 'Read the token board, trades, prices and stats.', tools: ['tokens', 'token_trades', 'price', 'stats'] },
  { slug: 'social', name: 'Social', description: 'Write posts and descriptions for launched tokens (text only; nothing is published by the service).', tools: [] },
  { slug: 'sniper', name: 'Sniper', description: 'Watch new launches and buy early under strict limits.', tools: ['automation_create', 'automation_list'] },
  { slug: 'wallet', name: 'Wallet', description: 'Transfers to whitelisted addresses and creator-fee claims.', tools: ['transfer', 'fees_earnings', 'fees_claim'] },
  { slug: 'image-generation', name: 'Image generation', description: 'Describe logos for launches (the server never fetches image URLs).', tools: [] },
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
