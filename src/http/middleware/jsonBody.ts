import type { IncomingMessage } from 'node:http'
import { createBrotliDecompress, createUnzip } from 'node:zlib'
import type { Transform } from 'node:stream'
import type { Middleware } from 'koa'
import { ValidationError } from '../../domain/errors.ts'
import { BodyReadError, InvalidBodyEncodingError, InvalidJsonError, PayloadTooLargeError, UnsupportedEncodingError } from '../inputErrors.ts'

declare module 'koa' {
  interface Request {
    /** The parsed JSON body of a POST, PUT, PATCH or DELETE; undefined for other methods. */
    body?: unknown
    /** That body's bytes as sent (not copied, not decoded): what a signed webhook's signature covers. */
    rawBody?: Buffer
  }
}

/** Deepest nesting of arrays and objects a body may have (no request of ours needs more than a few). */
export const MAX_JSON_DEPTH = 32
const PARSED_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
// RFC 8259 whitespace, then an object or an array: a bare scalar is not a request body.
const STRICT_JSON = /^[\x20\x09\x0a\x0d]*[[{]/

/**
 * The one content coding of a request (`identity` when none). Names are case-insensitive;
 * `identity` entries are ignored; more than one real coding, or an unknown one, is a 415.
 */
export function contentCodingOf(header: string | undefined): 'identity' | 'gzip' | 'deflate' | 'br' {
  const codings = (header ?? '').split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity')
  if (codings.length === 0) return 'identity'
  const [coding] = codings
  if (codings.length === 1 && (coding === 'gzip' || coding === 'x-gzip')) return 'gzip'
  if (codings.length === 1 && (coding === 'deflate' || coding === 'br')) return coding
  throw new UnsupportedEncodingError({ encoding: header ?? '' })
}

/** True when arrays and objects nest deeper than `max`; walks with an explicit stack, never recursion. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!
    if (v === null || typeof v !== 'object') continue
    if (depth > max) return true
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1])
    }
  }
  return false
}

/** How long the rest of an oversized or undecodable body may take to arrive before the answer goes out anyway. */
const DRAIN_TIMEOUT_MS = 10_000

/**
 * Reads and drops what is left of a body, `budget` bytes at most and for `DRAIN_TIMEOUT_MS` at
 * most; true when the whole body was read. A client that is still sending when the answer goes
 * out and the connection closes would see a reset (EPIPE) instead of the answer.
 */
function drainBody(req: IncomingMessage, budget: number): Promise<boolean> {
  if (req.complete) return Promise.resolve(true)
  if (req.destroyed || budget < 0) return Promise.resolve(false)
  return new Promise((resolve) => {
    let left = budget
    const done = (complete: boolean) => {
      clearTimeout(timer)
      req.off('data', onData).off('end', onEnd).off('close', onClose)
      resolve(complete)
    }
    const onData = (c: Buffer) => {
      left -= c.length
      if (left < 0) done(false)
    }
    const onEnd = () => done(true)
    const onClose = () => done(req.complete)
    const timer = setTimeout(() => done(false), DRAIN_TIMEOUT_MS)
    req.on('data', onData).on('end', onEnd).on('close', onClose)
    req.resume()
  })
}

export type ReadBodyOptions = {
  /** Bytes of the body (after decoding) at most: past it, a 413. */
  limit: number
  /**
   * Bytes of an oversized or undecodable body (as sent) read and dropped at most before the
   * error is answered; a body declared larger is refused at once, with `Connection: close`.
   */
  drainLimit: number
}

/**
 * Reads the body, decoding its Content-Encoding, and stops as soon as either the bytes received
 * or the bytes decoded pass `limit`: a decompression bomb never inflates past it. The rest of a
 * refused body is drained (up to `drainLimit`) before the error is answered.
 */
export function readBody(req: IncomingMessage, { limit, drainLimit }: ReadBodyOptions): Promise<Buffer> {
  const coding = contentCodingOf(req.headers['content-encoding'])
  const tooLarge = (complete: boolean) => new PayloadTooLargeError({ limitBytes: limit, closeConnection: !complete })
  const declared = Number(req.headers['content-length'] ?? 0)
  if (declared > drainLimit) return Promise.reject(tooLarge(false))
  if (declared > limit) return drainBody(req, drainLimit).then((complete) => Promise.reject(tooLarge(complete)))
  const decoder: Transform | undefined = coding === 'identity' ? undefined : coding === 'br' ? createBrotliDecompress() : createUnzip()
  const out = decoder ?? req
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let received = 0
    let decoded = 0
    let done = false
    const finish = (fail?: (complete: boolean) => Error) => {
      if (done) return
      done = true
      req.off('data', onReceived).off('error', onReadError).off('close', onClose)
      out.off('data', onDecoded).off('end', onEnd)
      if (decoder) {
        req.unpipe(decoder)
        decoder.destroy()
      }
      if (!fail) return resolve(Buffer.concat(chunks))
      // The rest is read and dropped first, so that the answer is not lost to a reset.
      void drainBody(req, drainLimit - (decoder ? received : decoded)).then((complete) => reject(fail(complete)))
    }
    const onReceived = (c: Buffer) => {
      received += c.length
      if (received > limit) finish(tooLarge)
    }
    const onDecoded = (c: Buffer) => {
      decoded += c.length
      if (decoded > limit) return finish(tooLarge)
      chunks.push(c)
    }
    const onEnd = () => finish()
    const onReadError = (err: Error) => finish(() => new BodyReadError({ cause: err }))
    const onClose = () => {
      if (!req.complete) finish(() => new BodyReadError())
    }
    req.on('error', onReadError).on('close', onClose)
    // A late error of a stream we stopped reading must not go unhandled.
    req.on('error', () => {})
    out.on('data', onDecoded).on('end', onEnd)
    if (decoder) {
      decoder.on('error', (err) => finish(received === 0 ? undefined : () => new InvalidBodyEncodingError({ encoding: coding, cause: err })))
      req.on('data', onReceived)
      req.pipe(decoder)
    }
  })
}

/** Parses a body as strict JSON: an object or an array, or `{}` for an empty body. */
export function parseJsonBody(raw: Buffer): unknown {
  // TextDecoder drops a leading BOM, as JSON clients may send one; bytes that are not UTF-8 are
  // refused (never stored as U+FFFD).
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw)
  } catch (err) {
    throw new InvalidJsonError({ cause: err })
  }
  if (text === '') return {}
  if (!STRICT_JSON.test(text)) throw new InvalidJsonError()
  let value: unknown
  try {
    // JSON.parse makes `__proto__` an own property: it is then an unknown field like any other.
    value = JSON.parse(text)
  } catch (err) {
    throw new InvalidJsonError({ cause: err })
  }
  if (nestedDeeperThan(value, MAX_JSON_DEPTH)) throw new ValidationError({ body: `Nested deeper than ${MAX_JSON_DEPTH} levels.` })
  return value
}

/**
 * JSON request bodies of POST, PUT, PATCH and DELETE, whatever their Content-Type (the API
 * speaks JSON only): gzip, deflate and br decoded within `limitBytes`, depth bounded before any
 * code walks the value. Sets `ctx.request.body`. A refused body is read and dropped up to
 * `drainLimitBytes` (as sent) before the error is answered.
 *
 * @example
 * app.use(jsonBody({ limitBytes: 1024 * 1024, drainLimitBytes: 8 * 1024 * 1024 }))
 */
export function jsonBody({ limitBytes, drainLimitBytes }: { limitBytes: number; drainLimitBytes: number }): Middleware {
  return async (ctx, next) => {
    if (PARSED_METHODS.has(ctx.method)) {
      const raw = await readBody(ctx.req, { limit: limitBytes, drainLimit: drainLimitBytes })
      ctx.request.rawBody = raw
      ctx.request.body = parseJsonBody(raw)
    }
    await next()
  }
}
