/**
 * Custodial wallet keys at rest: AES-256-GCM under a key derived (HKDF-SHA256) from one master
 * key, with the agent id as associated data so a ciphertext copied onto another agent's row
 * does not decrypt. Format: `v1:<iv b64>:<ciphertext b64>:<tag b64>`.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { chmod, link, mkdir, open, readFile, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { syncDir } from '../../domain/util/atomicFile.ts'

export type Hex = `0x${string}`

/** The one logger method used here; a pino Logger fits. */
export interface WarnLogger {
  warn(obj: object, msg: string): void
}

/** Thrown for keystore failures; messages never contain key material. */
export class KeystoreError extends Error {
  override name = 'KeystoreError'
}

const VERSION = 'v1'
const HKDF_INFO = 'agent-wallet-v1'
const IV_BYTES = 12
const TAG_BYTES = 16
const MASTER_KEY_BYTES = 32
const PRIVATE_KEY_RE = /^0x[0-9a-fA-F]{64}$/
const HEX_KEY_RE = /^[0-9a-fA-F]{64}$/
// 32 bytes = 43 base64 characters plus one '=' of padding; url-safe alphabet accepted too.
const BASE64_KEY_RE = /^[A-Za-z0-9+/_-]{43}=?$/
const MASTER_KEY_FILE = 'master.key'

function deriveAesKey(masterKey: Buffer): Buffer {
  if (!Buffer.isBuffer(masterKey) || masterKey.length !== MASTER_KEY_BYTES) {
    throw new KeystoreError(`Master key must be ${MASTER_KEY_BYTES} bytes.`)
  }
  // The master key is already uniformly random, so an empty salt is fine for HKDF.
  return Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), HKDF_INFO, 32))
}

function requireAgentId(agentId: string): Buffer {
  if (typeof agentId !== 'string' || agentId === '') throw new KeystoreError('agentId must be a non-empty string.')
  return Buffer.from(agentId, 'utf8')
}

/**
 * Encrypts a 32-byte private key (`0x` + 64 hex) for one agent.
 *
 * @example
 * const encrypted = encryptPrivateKey({ masterKey, agentId: agent.id, privateKey: generatePrivateKey() })
 */
export function encryptPrivateKey({ masterKey, agentId, privateKey }: { masterKey: Buffer; agentId: string; privateKey: string }): string {
  const aad = requireAgentId(agentId)
  if (typeof privateKey !== 'string' || !PRIVATE_KEY_RE.test(privateKey)) {
    throw new KeystoreError('privateKey must be 0x followed by 64 hex characters.')
  }
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', deriveAesKey(masterKey), iv, { authTagLength: TAG_BYTES })
  cipher.setAAD(aad)
  const ciphertext = Buffer.concat([cipher.update(Buffer.from(privateKey.slice(2), 'hex')), cipher.final()])
  return [VERSION, iv.toString('base64'), ciphertext.toString('base64'), cipher.getAuthTag().toString('base64')].join(':')
}

/**
 * Decrypts what {@link encryptPrivateKey} produced for the same agent and master key.
 * Throws KeystoreError if the master key or agent differ or the data was altered.
 *
 * @example
 * const account = privateKeyToAccount(decryptPrivateKey({ masterKey, agentId: agent.id, encrypted: agent.walletKeyEncrypted }))
 */
export function decryptPrivateKey({ masterKey, agentId, encrypted }: { masterKey: Buffer; agentId: string; encrypted: string }): Hex {
  const aad = requireAgentId(agentId)
  const parts = typeof encrypted === 'string' ? encrypted.split(':') : []
  if (parts.length !== 4 || parts[0] !== VERSION) {
    throw new KeystoreError(`Encrypted wallet key is not in the ${VERSION}:<iv>:<ciphertext>:<tag> format.`)
  }
  const iv = Buffer.from(parts[1]!, 'base64')
  const ciphertext = Buffer.from(parts[2]!, 'base64')
  const tag = Buffer.from(parts[3]!, 'base64')
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES || ciphertext.length !== 32) {
    throw new KeystoreError('Encrypted wallet key has malformed parts.')
  }
  let plaintext: Buffer
  try {
    const decipher = createDecipheriv('aes-256-gcm', deriveAesKey(masterKey), iv, { authTagLength: TAG_BYTES })
    decipher.setAAD(aad)
    decipher.setAuthTag(tag)
    plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()])
  } catch (err) {
    if (err instanceof KeystoreError) throw err
    throw new KeystoreError(
      'Could not decrypt wallet key: wrong master key, wrong agent, or the ciphertext was altered.',
    )
  }
  return `0x${plaintext.toString('hex')}`
}

/**
 * Parses a configured master key: 64 hex characters or base64 of 32 bytes. Throws otherwise
 * (without echoing the input).
 *
 * @example
 * parseMasterKey('00'.repeat(32)).length // 32
 */
export function parseMasterKey(text: string): Buffer {
  const s = typeof text === 'string' ? text.trim() : ''
  if (HEX_KEY_RE.test(s)) return Buffer.from(s, 'hex')
  if (BASE64_KEY_RE.test(s)) {
    const key = Buffer.from(s, s.includes('-') || s.includes('_') ? 'base64url' : 'base64')
    if (key.length === MASTER_KEY_BYTES) return key
  }
  throw new KeystoreError('Wallet master key must be 64 hex characters or base64 of 32 bytes.')
}

/**
 * Returns the wallet master key: the configured one if given, else `<dataDir>/master.key`,
 * creating that file (mode 0600) with a fresh random key on first use. Never logs the key.
 *
 * @example
 * const masterKey = await loadOrCreateMasterKey({ dataDir: config.dataDir, configured: config.walletMasterKey, logger })
 */
export async function loadOrCreateMasterKey({
  dataDir,
  configured,
  logger,
}: {
  dataDir: string
  configured?: string | undefined
  logger: WarnLogger
}): Promise<Buffer> {
  if (configured !== undefined) return parseMasterKey(configured)

  const file = join(dataDir, MASTER_KEY_FILE)
  const existing = await readKeyFile(file, logger)
  if (existing) return existing

  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  const key = randomBytes(MASTER_KEY_BYTES)
  // Write to a private temp file, then link() it into place: link fails if master.key already
  // exists, so two processes starting together cannot overwrite each other's key, and a reader
  // never sees a half-written file.
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
  const handle = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600)
  try {
    await handle.writeFile(`${key.toString('hex')}\n`, 'utf8')
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    await chmod(tmp, 0o600) // in case a filesystem ignored the create mode
    await link(tmp, file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    const winner = await readKeyFile(file, logger)
    if (!winner) throw new KeystoreError(`${file} appeared while creating it but could not be read.`)
    return winner
  } finally {
    await unlink(tmp).catch(() => {})
  }
  await syncDir(dataDir)
  const mode = (await stat(file)).mode & 0o777
  if (mode !== 0o600) throw new KeystoreError(`${file} was created with mode ${mode.toString(8)}, expected 600.`)
  logger.warn(
    { path: file },
    'Generated a new wallet master key on disk; this is for local use only. Configure a managed master key in production and back it up: losing it loses every custodial wallet.',
  )
  return key
}

async function readKeyFile(file: string, logger: WarnLogger): Promise<Buffer | undefined> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  // Refuse rather than regenerate: replacing an existing key would orphan every wallet.
  let key: Buffer
  try {
    key = parseMasterKey(text)
  } catch {
    throw new KeystoreError(`${file} exists but does not hold a valid master key; refusing to replace it.`)
  }
  const mode = (await stat(file)).mode & 0o777
  if ((mode & 0o077) !== 0) {
    logger.warn({ path: file, mode: mode.toString(8) }, 'Wallet master key file is readable by other users; run chmod 600 on it.')
  }
  return key
}

