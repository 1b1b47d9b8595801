import { randomBytes } from 'node:crypto'
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  KeystoreError,
  decryptPrivateKey,
  encryptPrivateKey,
  loadOrCreateMasterKey,
  parseMasterKey,
  type WarnLogger,
} from './keystore.ts'

const privateKey = `0x${randomBytes(32).toString('hex')}` as const
const masterKey = randomBytes(32)

function recordingLogger(): WarnLogger & { calls: Array<{ obj: object; msg: string }> } {
  const calls: Array<{ obj: object; msg: string }> = []
  return { calls, warn: (obj, msg) => void calls.push({ obj, msg }) }
}

function flipFirstByte(b64: string): string {
  const buf = Buffer.from(b64, 'base64')
  buf[0] = buf[0]! ^ 0x01
  return buf.toString('base64')
}

describe('encryptPrivateKey / decryptPrivateKey', () => {
  it('round-trips and uses a fresh IV each time', () => {
    const a = encryptPrivateKey({ masterKey, agentId: 'agent-1', privateKey })
    const b = encryptPrivateKey({ masterKey, agentId: 'agent-1', privateKey })
    expect(a).toMatch(/^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/)
    expect(a).not.toBe(b)
    expect(Buffer.from(a.split(':')[1]!, 'base64')).toHaveLength(12)
    expect(a).not.toContain(privateKey.slice(2))
    expect(decryptPrivateKey({ masterKey, agentId: 'agent-1', encrypted: a })).toBe(privateKey)
    expect(decryptPrivateKey({ masterKey, agentId: 'agent-1', encrypted: b })).toBe(privateKey)
  })

  it('returns lowercase hex even for uppercase input', () => {
    const upper = `0x${privateKey.slice(2).toUpperCase()}`
    const encrypted = encryptPrivateKey({ masterKey, agentId: 'a', privateKey: upper })
    expect(decryptPrivateKey({ masterKey, agentId: 'a', encrypted })).toBe(privateKey.toLowerCase())
  })

  it('refuses a ciphertext moved to another agent', () => {
    const encrypted = encryptPrivateKey({ masterKey, agentId: 'agent-1', privateKey })
    expect(() => decryptPrivateKey({ masterKey, agentId: 'agent-2', encrypted })).toThrow(KeystoreError)
  })

  it('refuses a different master key', () => {
    const encrypted = encryptPrivateKey({ masterKey, agentId: 'agent-1', privateKey })
    expect(() => decryptPrivateKey({ masterKey: randomBytes(32), agentId: 'agent-1', encrypted })).toThrow(/Could not decrypt/)
  })

  it('refuses tampered ciphertext, tag or IV, without echoing secrets', () => {
    const encrypted = encryptPrivateKey({ masterKey, agentId: 'agent-1', privateKey })
    const [v, iv, ct, tag] = encrypted.split(':') as [string, string, string, string]
    for (const tampered of [
      [v, iv, flipFirstByte(ct), tag],
      [v, iv, ct, flipFirstByte(tag)],
      [v, flipFirstByte(iv), ct, tag],
    ]) {
      let caught: unknown
      try {
        decryptPrivateKey({ masterKey, agentId: 'agent-1', encrypted: tampered.join(':') })
      } catch (err) {
        caught = err
      }
      expect(caught).toBeInstanceOf(KeystoreError)
      const message = (caught as Error).message
      expect(message).not.toContain(privateKey.slice(2))
      expect(message).not.toContain(masterKey.toString('hex'))
      expect(message).not.toContain(ct)
    }
  })

  it('refuses malformed input with a clear message', () => {
    expect(() => decryptPrivateKey({ masterKey, agentId: 'a', encrypted: 'nonsense' })).toThrow(/format/)
    expect(() => decryptPrivateKey({ masterKey, agentId: 'a', encrypted: 'v2:a:b:c' })).toThrow(/format/)
    expect(() => decryptPrivateKey({ masterKey, agentId: 'a', encrypted: 'v1:AAAA:AAAA:AAAA' })).toThrow(/malformed/)
    expect(() => encryptPrivateKey({ masterKey, agentId: 'a', privateKey: '0x1234' })).toThrow(KeystoreError)
    expect(() => encryptPrivateKey({ masterKey, agentId: '', privateKey })).toThrow(/agentId/)
    expect(() => encryptPrivateKey({ masterKey: randomBytes(16), agentId: 'a', privateKey })).toThrow(/32 bytes/)
  })

  it('error for a bad private key does not echo it', () => {
    const almost = privateKey + 'zz'
    expect(() => encryptPrivateKey({ masterKey, agentId: 'a', privateKey: almost })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(privateKey.slice(2)) }),
    )
  })
})

describe('parseMasterKey', () => {
  const key = randomBytes(32)

  it('accepts hex (either case, surrounding whitespace) and base64 / base64url', () => {
    expect(parseMasterKey(key.toString('hex')).equals(key)).toBe(true)
    expect(parseMasterKey(` ${key.toString('hex').toUpperCase()}\n`).equals(key)).toBe(true)
    expect(parseMasterKey(key.toString('base64')).equals(key)).toBe(true)
    expect(parseMasterKey(key.toString('base64url')).equals(key)).toBe(true)
  })

  it('refuses anything else without echoing it', () => {
    const secretish = key.toString('hex').slice(0, 62)
    for (const bad of ['', secretish, key.toString('hex') + '00', randomBytes(31).toString('base64'), randomBytes(33).toString('base64'), 'g'.repeat(64)]) {
      expect(() => parseMasterKey(bad)).toThrow(KeystoreError)
    }
    expect(() => parseMasterKey(secretish)).toThrow(expect.objectContaining({ message: expect.not.stringContaining(secretish) }))
  })
})

describe('loadOrCreateMasterKey', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'keystore-test-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('uses a configured key and touches no file', async () => {
    const key = randomBytes(32)
    const logger = recordingLogger()
    const dataDir = join(dir, 'data')
    expect((await loadOrCreateMasterKey({ dataDir, configured: key.toString('base64'), logger })).equals(key)).toBe(true)
    expect((await loadOrCreateMasterKey({ dataDir, configured: key.toString('hex'), logger })).equals(key)).toBe(true)
    await expect(stat(dataDir)).rejects.toThrow(/ENOENT/)
    expect(logger.calls).toHaveLength(0)
  })

  it('throws on an invalid configured key rather than falling back to a file', async () => {
    const logger = recordingLogger()
    await expect(loadOrCreateMasterKey({ dataDir: dir, configured: 'not-a-key', logger })).rejects.toThrow(KeystoreError)
    await expect(loadOrCreateMasterKey({ dataDir: dir, configured: '', logger })).rejects.toThrow(KeystoreError)
    expect(await readdir(dir)).toEqual([])
  })

  it('creates <dataDir>/master.key with mode 0600 (dir created recursively), warns without the key, then reuses it', async () => {
    const dataDir = join(dir, 'nested', 'data')
    const logger = recordingLogger()
    const first = await loadOrCreateMasterKey({ dataDir, logger })
    expect(first).toHaveLength(32)

    const file = join(dataDir, 'master.key')
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    expect((await readFile(file, 'utf8')).trim()).toBe(first.toString('hex'))
    expect(await readdir(dataDir)).toEqual(['master.key']) // temp file cleaned up

    expect(logger.calls).toHaveLength(1)
    expect(logger.calls[0]!.msg).toMatch(/local use only/)
    const logged = JSON.stringify(logger.calls)
    expect(logged).not.toContain(first.toString('hex'))
    expect(logged).not.toContain(first.toString('base64'))

    const second = await loadOrCreateMasterKey({ dataDir, logger })
    expect(second.equals(first)).toBe(true)
    expect(logger.calls).toHaveLength(1)
  })

  it('yields one key when several callers race to create it', async () => {
    const logger = recordingLogger()
    const keys = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateMasterKey({ dataDir: dir, logger })))
    for (const k of keys) expect(k.equals(keys[0]!)).toBe(true)
    expect(await readdir(dir)).toEqual(['master.key'])
  })

  it('refuses to replace an unreadable/corrupt key file', async () => {
    await writeFile(join(dir, 'master.key'), 'garbage\n', { mode: 0o600 })
    await expect(loadOrCreateMasterKey({ dataDir: dir, logger: recordingLogger() })).rejects.toThrow(/refusing to replace/)
    expect(await readFile(join(dir, 'master.key'), 'utf8')).toBe('garbage\n')
  })

  it('warns when an existing key file is readable by others', async () => {
    const key = randomBytes(32)
    await writeFile(join(dir, 'master.key'), key.toString('hex'))
    await chmod(join(dir, 'master.key'), 0o644)
    const logger = recordingLogger()
    expect((await loadOrCreateMasterKey({ dataDir: dir, logger })).equals(key)).toBe(true)
    expect(logger.calls[0]?.msg).toMatch(/chmod 600/)
    expect(JSON.stringify(logger.calls)).not.toContain(key.toString('hex'))
  })

  it('accepts a pino logger', async () => {
    const logger = pino({ level: 'silent' })
    expect(await loadOrCreateMasterKey({ dataDir: dir, logger })).toHaveLength(32)
  })
})
