import type { TokenRow } from './ports.ts'

/** A token of the board as the API shows it (camelCase, addresses lower case, numbers as the index has them). */
export function tokenView(t: TokenRow) {
  return {
    address: t.address,
    symbol: t.symbol,
    name: t.name,
    venue: t.venue,
    quote: t.quote_symbol,
    creatorAddress: t.creator_address,
    creatorAgent: t.creator_agent_id ? { id: t.creator_agent_id, name: t.agent_name } : null,
    poolAddress: t.pool_address,
    totalSupply: t.total_supply,
    graduated: t.graduated,
    verified: t.verified,
    logoUrl: t.logo_url,
    blockNumber: Number(t.block_number),
    createdAt: new Date(t.created_at).toISOString(),
  }
}

/**
 * part / whole as a percentage with two decimals, capped at 100.
 *
 * @example
 * percent(1n, 3n) // '33.33'
 */
export function percent(part: bigint, whole: bigint): string {
  if (whole === 0n) return '0.00'
  let bp = (part * 10_000n) / whole
  if (bp > 10_000n) bp = 10_000n
  const s = bp.toString().padStart(3, '0')
  return `${s.slice(0, -2)}.${s.slice(-2)}`
}

/** A quote asset's logo: a small SVG as a data URL (no image is fetched from anywhere). */
export function quoteLogo(symbol: string): string {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><circle cx="32" cy="32" r="30" fill="${symbol === 'ETH' ? '#627eea' : '#2775ca'}"/><text x="32" y="38" font-size="14" text-anchor="middle" fill="#fff" font-family="sans-serif">${symbol}</text></svg>`
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`
}
