import { ValidationError, type FieldErrors } from '../errors.ts'
import { isAddressEntry, type Policy } from './policy.ts'

/** Resolves a symbol to a verified token's address (WETH's for ETH), or says why it cannot. */
export type ResolveVerifiedSymbol = (symbol: string) => Promise<{ address: string } | { error: string }>

/**
 * Turns the token lists of a policy body into addresses, once, when the policy is set: a 0x
 * address is kept (lower case), a symbol must name a verified token (a quote asset, a stock, an
 * operator-verified launch), else a 422 names the entry. ETH and WETH both become WETH's
 * address, so they are one asset for every list. Without a chain only addresses are taken.
 *
 * @example
 * const policy = await resolvePolicyTokens(body.policy, resolve) // allow_tokens: ['0xc02a...', '0xa0b8...']
 */
export async function resolvePolicyTokens<P extends Partial<Policy>>(
  policy: P | undefined,
  resolve: ResolveVerifiedSymbol | undefined,
): Promise<P | undefined> {
  if (!policy) return policy
  const errors: FieldErrors = {}
  const out: Partial<Policy> = { ...policy }
  for (const list of ['allow_tokens', 'deny_tokens'] as const) {
    const entries = policy[list]
    if (!entries) continue
    const addresses = await Promise.all(
      entries.map(async (entry, i) => {
        if (isAddressEntry(entry)) return entry.toLowerCase()
        const r = resolve ? await resolve(entry) : { error: 'Without a chain, name tokens by their 0x address.' }
        if ('error' in r) errors[`policy.${list}.${i}`] = r.error
        else return r.address.toLowerCase()
        return undefined
      }),
    )
    out[list] = [...new Set(addresses.filter((a): a is string => a !== undefined))]
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
  return out as P
}
