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
  { slug: 'trading', name: 'Trading', description: 'Quote and execute swaps within the agent policy.', alwaysOn: false, tools: ['swap_quote', 'swap_execute', 'get_price'] },
  { slug: 'token-launch', name: 'Token launch', description: 'Preview and launch tokens on venue-a, venue-b or self-funded.', alwaysOn: false, tools: ['launch_preview', 'launch_token', 'get_launch_status'] },
  { slug: 'portfolio', name: 'Portfolio', description: 'Read the agent, its holdings valued in USD (cost basis and PnL) and its whitelist.', alwaysOn: true, tools: ['get_agent', 'get_portfolio', 'get_whitelist'] },
  { slug: 'market-intelligence', name: 'Market intelligence', description: 'Read the token board, trades, prices and stats.', alwaysOn: false, tools: ['list_tokens', 'get_token', 'get_price'] },
  { slug: 'social', name: 'Social', description: 'Write posts and descriptions for launched tokens (text only; nothing is published by the service).', alwaysOn: false, tools: [] },
  { slug: 'sniper', name: 'Sniper', description: 'Watch new launches and buy early under strict limits.', alwaysOn: false, tools: ['list_automations', 'create_automation'] },
  { slug: 'wallet', name: 'Wallet', description: 'Transfers to whitelisted addresses and creator-fee claims.', alwaysOn: false, tools: ['wallet_transfer', 'get_whitelist', 'get_fee_earnings', 'claim_fees'] },
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

/**
 * The tool names an agent's skills grant: its listed skills' and every always-on skill's.
 * Unknown slugs grant nothing.
 *
 * @example
 * grantedTools(['trading']) // swap_quote, swap_execute, get_price, and portfolio's read tools
 */
export function grantedTools(skills: readonly string[]): Set<string> {
  const listed = new Set(skills)
  return new Set(BUILTIN_SKILLS.filter((s) => s.alwaysOn || listed.has(s.slug)).flatMap((s) => s.tools))
}
