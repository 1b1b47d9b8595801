import type { IntelPorts } from './ports.ts'
import { moversOf } from './getTopMovers.ts'

/** A token's name and 24 h change (a decimal), by lower-case address. */
export type TokenFacts = Map<string, { name: string; change24h: number | null }>

/**
 * Names and 24 h changes of the tokens the index knows, from the shared 24 h movers board:
 * launched tokens and the reference assets (WETH, the stocks, in their USDC pools).
 *
 * @example
 * const facts = await tokenFacts(ports)
 * facts.get(address) // { name: 'Cat', change24h: 0.125 }
 */
export async function tokenFacts(ports: IntelPorts): Promise<TokenFacts> {
  const facts: TokenFacts = new Map()
  for (const s of ports.prices.deployment?.stocks ?? []) facts.set(s.address.toLowerCase(), { name: s.name, change24h: null })
  // A stock the index has not priced yet keeps its name.
  for (const m of await moversOf(ports, '24h')) facts.set(m.mint, { name: m.name, change24h: m.change })
  return facts
}
