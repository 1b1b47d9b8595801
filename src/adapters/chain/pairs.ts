import { getAddress, zeroAddress, type Address } from 'viem'
import type { ChainHandle } from './chain.ts'
import { AmmFactoryArtifact } from '../../dev/artifacts/index.ts'

const lower = (a: string) => a.toLowerCase() as Address
const immutable = new WeakMap<object, Map<string, Promise<unknown>>>()

/**
 * What never changes once it exists, kept per chain: a pair's address for two tokens (a pair is
 * never removed), and a pair's token0 and fee hook (immutable in the contract). `keep` says
 * whether a value is final (e.g. not "no pair yet"); failed reads are forgotten.
 *
 * @example
 * const token0 = await readOnce(chain, `token0:${pair}`, () => chain.publicClient.readContract({ address: pair, abi, functionName: 'token0' }))
 */
export function readOnce<T>(chain: ChainHandle, key: string, read: () => Promise<T>, keep: (v: T) => boolean = () => true): Promise<T> {
  // Keyed by the deployment, so views of the same chain (e.g. pinned to a block) share it.
  let memo = immutable.get(chain.manifest)
  if (!memo) immutable.set(chain.manifest, (memo = new Map()))
  const hit = memo.get(key) as Promise<T> | undefined
  if (hit) return hit
  const p = read().then((v) => {
    if (!keep(v)) memo.delete(key)
    return v
  })
  p.catch(() => memo.delete(key))
  memo.set(key, p)
  return p
}

/**
 * The AMM pair of two tokens (lower case), from the factory; undefined while there is none.
 *
 * @example
 * const pair = await pairOf(chain, token, chain.manifest.contracts.usdc)
 */
export async function pairOf(chain: ChainHandle, a: Address, b: Address): Promise<Address | undefined> {
  const [x, y] = [lower(a), lower(b)].sort()
  return readOnce(chain, `pair:${x}:${y}`, () => readPair(chain, a, b), (p) => p !== undefined)
}

async function readPair(chain: ChainHandle, a: Address, b: Address): Promise<Address | undefined> {
  const pair = await chain.publicClient.readContract({
    address: chain.manifest.contracts.factory,
    abi: AmmFactoryArtifact.abi,
    functionName: 'getPair',
    args: [getAddress(a), getAddress(b)],
  })
  return pair === zeroAddress ? undefined : lower(pair)
}
