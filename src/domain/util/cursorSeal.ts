import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'
import { ValidationError } from '../errors.ts'

/** A cursor as sent to clients is at most this long; anything longer is refused unread. */
const MAX_SEALED_LENGTH = 512
/** Bytes of HMAC-SHA256 kept (128 bits), sent as 22 base64url characters. */
const TAG_BYTES = 16

export type CursorSeal = {
  /** Signs a cursor the service made: `<cursor>.<tag>`. */
  seal(cursor: string): string
  /** The cursor a sealed one carries; 422 naming `cursor` when the service did not issue it. */
  open(sealed: string): string
}

/**
 * Page cursors signed with a key derived (HKDF-SHA256) from the wallet master key: a cursor the
 * service did not issue, or one altered, is a 422 naming `cursor` whatever it holds. The key is
 * as stable as the master key (WALLET_MASTER_KEY, or the one kept in DATA_DIR), so cursors keep
 * working across restarts and on every node of one deployment.
 *
 * @example
 * const cursors = createCursorSeal({ masterKey })
 * const next = cursors.seal(encodeCursor(last.createdAt, last.id))
 * decodeCursor(cursors.open(next))
 */
export function createCursorSeal({ masterKey }: { masterKey: Buffer }): CursorSeal {
  const key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'alts page cursor v1', 32))
  const tagOf = (cursor: string) => Buffer.from(createHmac('sha256', key).update(cursor).digest().subarray(0, TAG_BYTES).toString('base64url'))
  return {
    seal: (cursor) => `${cursor}.${tagOf(cursor).toString()}`,
    open(sealed) {
      const dot = sealed.lastIndexOf('.')
      if (sealed.length > MAX_SEALED_LENGTH || dot < 0) throw new ValidationError({ cursor: 'Invalid cursor.' })
      const cursor = sealed.slice(0, dot)
      // The tag's text exactly as issued, compared in constant time (timingSafeEqual needs equal lengths).
      const tag = Buffer.from(sealed.slice(dot + 1))
      const expected = tagOf(cursor)
      if (tag.length !== expected.length || !timingSafeEqual(tag, expected)) throw new ValidationError({ cursor: 'Invalid cursor.' })
      return cursor
    },
  }
}
