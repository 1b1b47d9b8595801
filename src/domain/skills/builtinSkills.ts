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
  /** Added to the agent's system prompt when the skill applies (ours: trusted text). */
  instructions: string
}

/** A policy a preset suggests (snake_case, as agent bodies send it); applied only when the owner sends it. */
export type SuggestedPolicy = { max_trade_usd: string; max_daily_usd: string; max_price_impact_bps: number }

export type StrategyPreset = {
  slug: string
  name: string
  description: string
  skills: readonly string[]
  /** The goal an agent on this preset starts its scheduled runs with. */
  goal: string
  /** The agent's `run_interval_seconds` when it is created with this preset and names none (0 = never). */
  runIntervalSeconds: number
  suggestedPolicy: SuggestedPolicy
}

export const BUILTIN_SKILLS: readonly Skill[] = [
  {
    slug: 'trading', name: 'Trading', description: 'Quote and execute swaps within the agent policy.', alwaysOn: false,
    tools: ['swap_quote', 'swap_execute', 'get_price'],
    instructions: 'Quote every swap with swap_quote before executing it, and execute with the quote id so the route and minimum output hold. ' +
      'Stay within the policy (per-trade and daily USD caps, price impact, token lists); a refusal is final, do not split a trade to get around it. ' +
      'Never buy an unverified token unless your goal says so explicitly.',
  },
  {
    slug: 'token-launch', name: 'Token launch', description: 'Preview and launch tokens on venue-a, venue-b or self-funded.', alwaysOn: false,
    tools: ['launch_preview', 'launch_token', 'get_launch_status'],
    instructions: 'Preview a launch before launching it and check its cost. A launch is irreversible: launch only when your goal or the owner asks for one, ' +
      'with a name, symbol and description that are yours to use; never imitate an existing token.',
  },
  {
    slug: 'portfolio', name: 'Portfolio', description: 'Read the agent, its holdings valued in USD (cost basis and PnL) and its whitelist.', alwaysOn: true,
    tools: ['get_agent', 'get_portfolio', 'get_whitelist'],
    instructions: 'Read your holdings and policy before deciding anything that moves funds; report values in USD with the figures the tools gave you.',
  },
  {
    slug: 'market-intelligence', name: 'Market intelligence', description: 'Read the token board, prices, candles, indicators and market signals.', alwaysOn: false,
    tools: ['list_tokens', 'get_token', 'get_price', 'get_market_signals', 'get_indicators', 'get_candles'],
    instructions: 'Base market judgements on the token board, prices, candles, indicators and signals the tools return; say when data is missing or stale rather than guessing.',
  },
  {
    slug: 'social', name: 'Social', description: 'Write posts and descriptions for launched tokens (text only; nothing is published by the service).', alwaysOn: false,
    tools: [],
    instructions: 'You may draft posts and token descriptions as text in your answer. Nothing is published by the service; make no claims of returns.',
  },
  {
    slug: 'sniper', name: 'Sniper', description: 'Watch new launches and buy early under strict limits.', alwaysOn: false,
    tools: ['list_automations', 'create_automation'],
    instructions: 'Enter new launches only through automations with small, capped sizes; list the existing automations first and do not duplicate one.',
  },
  {
    slug: 'wallet', name: 'Wallet', description: 'Transfers to whitelisted addresses and creator-fee claims.', alwaysOn: false,
    tools: ['wallet_transfer', 'get_whitelist', 'get_fee_earnings', 'claim_fees'],
    instructions: 'Transfer only to whitelisted addresses that are usable now; you cannot add to the whitelist. Claim creator fees when they are worth more than the gas.',
  },
  {
    slug: 'image-generation', name: 'Image generation', description: 'Describe logos for launches (the server never fetches image URLs).', alwaysOn: false,
    tools: [],
    instructions: 'You may describe a logo in words for a launch. The service never fetches or stores an image URL you mention.',
  },
]

/** Conservative caps for unattended agents; the owner sets the policy they want. */
const CAUTIOUS: SuggestedPolicy = { max_trade_usd: '50', max_daily_usd: '250', max_price_impact_bps: 300 }

export const STRATEGY_PRESETS: readonly StrategyPreset[] = [
  {
    slug: 'monitor-exit', name: 'Monitor and exit', description: 'Hold positions and sell on drawdown or target.', skills: ['trading', 'portfolio'],
    goal: 'Review your holdings. Sell a position that fell more than 20% below its cost basis or rose more than 50% above it; otherwise hold. Summarise what you did and why.',
    runIntervalSeconds: 300, suggestedPolicy: CAUTIOUS,
  },
  {
    slug: 'momentum', name: 'Momentum', description: 'Buy tokens with rising volume, cut losers quickly.', skills: ['trading', 'market-intelligence'],
    goal: 'Find tokens with rising volume and price on the board, buy small positions in at most one or two, and sell holdings that lost more than 10%. Summarise the trades.',
    runIntervalSeconds: 600, suggestedPolicy: CAUTIOUS,
  },
  {
    slug: 'defi-yield', name: 'DeFi yield', description: 'Park idle quote assets and claim creator fees.', skills: ['wallet', 'portfolio'],
    goal: 'Check creator-fee earnings and claim them when they are worth more than the gas; report idle balances. Summarise what you claimed.',
    runIntervalSeconds: 3600, suggestedPolicy: { max_trade_usd: '100', max_daily_usd: '500', max_price_impact_bps: 100 },
  },
  {
    slug: 'macro-guard', name: 'Macro guard', description: 'Rotate into USDC or tokenized stocks when the market turns.', skills: ['trading', 'portfolio'],
    goal: 'Judge whether your holdings are falling broadly; if so, rotate part of them into USDC or tokenized stocks, else hold. Summarise the decision.',
    runIntervalSeconds: 1800, suggestedPolicy: { max_trade_usd: '200', max_daily_usd: '1000', max_price_impact_bps: 200 },
  },
  {
    slug: 'sniper', name: 'Sniper', description: 'Enter new launches early with small, capped sizes.', skills: ['sniper', 'trading'],
    goal: 'Look at the newest launches and keep at most a few capped sniper automations for promising ones; remove none you did not create. Summarise the automations.',
    runIntervalSeconds: 120, suggestedPolicy: { max_trade_usd: '20', max_daily_usd: '100', max_price_impact_bps: 500 },
  },
]

export const SKILL_SLUGS = new Set(BUILTIN_SKILLS.map((s) => s.slug))
export const STRATEGY_SLUGS = new Set(STRATEGY_PRESETS.map((s) => s.slug))

/** The preset's skills: what an agent created with this strategy and no skills gets. */
export function presetSkills(strategy: string): string[] {
  return [...(STRATEGY_PRESETS.find((p) => p.slug === strategy)?.skills ?? [])]
}

/** The preset's run interval: what an agent created with this strategy and no interval gets (0 without a preset). */
export function presetRunInterval(strategy: string | null | undefined): number {
  return STRATEGY_PRESETS.find((p) => p.slug === strategy)?.runIntervalSeconds ?? 0
}

/** Every tool name a built-in skill grants: the registry's planned names (some are not built yet). */
export const BUILTIN_TOOL_NAMES: ReadonlySet<string> = new Set(BUILTIN_SKILLS.flatMap((s) => s.tools))

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
