/**
 * API keys: `cpk_` + 32 random base62 characters + a 6-character base62 CRC32 of the random
 * part. The checksum lets us refuse typos and garbage before touching the database; only the
 * SHA-256 of the whole key is stored, plus a short non-secret hint for display.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto'
import { crc32 } from 'node:zlib'

export const API_KEY_PREFIX = 'cpk_'
export const API_KEY_RANDOM_LENGTH = 32
export const API_KEY_CHECKSUM_LENGTH = 6
export const API_KEY_LENGTH = API_KEY_PREFIX.length + API_KEY_RANDOM_LENGTH + API_KEY_CHECKSUM_LENGTH

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
// 248 = 4 * 62: bytes below it map onto the alphabet uniformly, the rest are redrawn.
const REJECT_AT = 256 - (256 % BASE62.length)
const BASE62_RE = /^[0-9A-Za-z]+$/

export interface GeneratedApiKey {
  /** The full secret; shown to the caller once, never stored. */
  value: string
  /** Hex SHA-256 of `value`; what the database stores and looks up. */
  hash: string
  /** Display-only, e.g. `cpk_Ab3x...9Qz1`. */
  hint: string
}

function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    // Over-draw a little so one call to randomBytes usually suffices despite rejections.
    for (const byte of randomBytes(length + 8)) {
      if (byte >= REJECT_AT) continue
      out += BASE62.charAt(byte % BASE62.length)
      if (out.length === length) break
    }
  }
  return out
}

function checksumOf(random: string): string {
  let n = crc32(random)
  let out = ''
  do {
    out = BASE62.charAt(n % 62) + out
    n = Math.floor(n / 62)
  } while (n > 0)
  // 62^6 > 2^32, so a CRC32 always fits in 6 characters.
  return out.padStart(API_KEY_CHECKSUM_LENGTH, '0')
}

/**
 * Creates a new API key with its storage hash and display hint.
 *
 * @example
 * const { value, hash, hint } = generateApiKey()
 * // show `value` once; store `hash` and `hint`
 */
export function generateApiKey(): GeneratedApiKey {
  const random = randomBase62(API_KEY_RANDOM_LENGTH)
  const value = API_KEY_PREFIX + random + checksumOf(random)
  return {
    value,
    hash: hashApiKey(value),
    hint: `${API_KEY_PREFIX}${random.slice(0, 4)}...${value.slice(-4)}`,
  }
}

/**
 * Checks prefix, length, alphabet and checksum; a cheap filter before any database read.
 * It does not say whether the key exists.
 *
 * @example
 * if (!isWellFormedApiKey(presented)) throw new UnauthorizedError()
 */
export function isWellFormedApiKey(value: string): boolean {
  if (typeof value !== 'string' || value.length !== API_KEY_LENGTH || !value.startsWith(API_KEY_PREFIX)) return false
  const body = value.slice(API_KEY_PREFIX.length)
  if (!BASE62_RE.test(body)) return false
  const random = body.slice(0, API_KEY_RANDOM_LENGTH)
  return checksumOf(random) === body.slice(API_KEY_RANDOM_LENGTH)
}

/**
 * Hex SHA-256 of the full key. Keys carry 190 bits of entropy, so an unsalted fast hash is
 * sufficient and allows lookup by hash.
 *
 * @example
 * const row = await keys.findOne({ hash: hashApiKey(presented) })
 */
export function hashApiKey(value: string): string {
  return hash('sha256', value, 'hex')
}

/**
 * Constant-time string comparison (for hashes; lengths are not secret).
 *
 * @example
 * hashesEqual(hashApiKey(presented), row.hash) // true when they match
 */
export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8')
  const right = Buffer.from(b, 'utf8')
  if (left.length !== right.length) return false
  return timingSafeEqual(left, right)
}
