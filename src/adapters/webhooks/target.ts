import { lookup } from 'node:dns'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/**
 * Which webhook targets are allowed (SSRF): `none` refuses every address that is not public
 * unicast (loopback, private, link-local including the cloud metadata address, CGNAT, multicast,
 * reserved, ...); `loopback` also allows loopback (the embedded/dev default, so a receiver on
 * this machine works); `all` allows private networks too (a self-hosted deployment whose
 * receivers are internal), never the metadata address.
 */
export type PrivateTargets = 'none' | 'loopback' | 'all'
export type TargetPolicy = { allowHttp: boolean; privateTargets: PrivateTargets }

const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254'])

export class TargetRefusedError extends Error {
  override name = 'TargetRefusedError'
}

/** Why `address` may not be a webhook target under `policy`; undefined when it may. */
export function refusedAddress(address: string, policy: TargetPolicy): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`
  const ip = ipaddr.process(address)
  const text = ip.toString()
  if (METADATA.has(text)) return `${text} is the cloud metadata address`
  const range = ip.range()
  if (range === 'unicast') return undefined
  if (policy.privateTargets === 'all') return undefined
  if (range === 'loopback' && policy.privateTargets === 'loopback') return undefined
  return `${text} is a ${range} address`
}

/**
 * Checks a URL's scheme and host (an IP literal, or every address its name resolves to). Throws
 * TargetRefusedError with the reason.
 */
export async function checkTargetUrl(raw: string, policy: TargetPolicy): Promise<URL> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new TargetRefusedError('not a URL')
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) {
    throw new TargetRefusedError(policy.allowHttp ? 'only http and https URLs' : 'only https URLs')
  }
  if (url.username || url.password) throw new TargetRefusedError('credentials in the URL are not accepted')
  const host = hostOf(url)
  const addresses = isIP(host) ? [host] : await resolveAll(host)
  for (const a of addresses) {
    const why = refusedAddress(a, policy)
    if (why) throw new TargetRefusedError(`${url.hostname} resolves to a refused address: ${why}`)
  }
  return url
}

/** The URL's host without IPv6 brackets. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1')

function resolveAll(host: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    lookup(host, { all: true }, (err, addresses) => {
      if (err) return reject(new TargetRefusedError(`${host} does not resolve (${err.code ?? err.message})`))
      if (addresses.length === 0) return reject(new TargetRefusedError(`${host} does not resolve`))
      resolve(addresses.map((a) => a.address))
    })
  })
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | Array<{ address: string; family: number }>, family?: number) => void

/**
 * A `lookup` for http.request that resolves the name and refuses (before any connection) when one
 * of its addresses is refused: the connection goes to the address that was checked, so a name
 * that changes its answer between the check and the connect cannot slip through.
 */
export function guardedLookup(policy: TargetPolicy) {
  return (host: string, options: { all?: boolean }, callback: LookupCallback) => {
    lookup(host, { all: true }, (err, addresses) => {
      if (err) return callback(err, '')
      const bad = addresses.map((a) => refusedAddress(a.address, policy)).find(Boolean)
      if (bad || addresses.length === 0) return callback(Object.assign(new TargetRefusedError(`${host}: ${bad ?? 'no address'}`), { code: 'ETARGETREFUSED' }), '')
      if (options.all) return callback(null, addresses)
      callback(null, addresses[0]!.address, addresses[0]!.family)
    })
  }
}
