import { keccak256, stringToHex, type Address } from 'viem'

/**
 * The prefix of every paper token's address: eight zero bytes, which no deployed contract's
 * address has in practice (2^64 tries to find one), then the hex digit `a` (so no low address,
 * such as 0x…dEaD or a precompile, has the form).
 */
export const PAPER_ADDRESS_PREFIX = '0x0000000000000000a'

/**
 * The address of the virtual token a paper agent's launch makes (docs/api.md, "Paper agents"):
 * eight zero bytes, the hex digit `a`, then the last 23 hex digits of
 * keccak256("paper-launch:" + launchId), in lower case. Deterministic (a retry of the launch names the same token) and clearly no contract.
 *
 * @example
 * paperTokenAddress('0b6e…') // '0x0000000000000000a' + 23 hex digits
 */
export function paperTokenAddress(launchId: string): Address {
  return `${PAPER_ADDRESS_PREFIX}${keccak256(stringToHex(`paper-launch:${launchId}`)).slice(-23)}` as Address
}

/** Whether an address has the paper tokens' form. */
export const isPaperAddress = (address: string) => /^0x0{16}a[0-9a-f]{23}$/i.test(address)
