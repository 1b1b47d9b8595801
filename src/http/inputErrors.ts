import { ServiceError } from '../domain/errors.ts'

/** The body (after decoding its Content-Encoding) is over the limit: 413 `payload_too_large`. */
export class PayloadTooLargeError extends ServiceError {
  constructor({ limitBytes }: { limitBytes: number }) {
    // The rest of the body is not read: the connection closes after the answer.
    super(`Request body exceeds ${limitBytes / 1024 / 1024} MB.`, { code: 'payload_too_large', status: 413, headers: { Connection: 'close' } })
  }
}

/** A Content-Encoding the service does not decode: 415 `unsupported_encoding`. */
export class UnsupportedEncodingError extends ServiceError {
  constructor({ encoding }: { encoding: string }) {
    super(`Content-Encoding ${JSON.stringify(encoding.slice(0, 64))} is not supported; send gzip, deflate, br or identity.`, {
      code: 'unsupported_encoding',
      status: 415,
    })
  }
}

/** A body that does not decode as its Content-Encoding says: 400 `invalid_body_encoding`. */
export class InvalidBodyEncodingError extends ServiceError {
  constructor({ encoding, cause }: { encoding: string; cause?: unknown }) {
    super(`The request body is not valid ${encoding} data.`, { code: 'invalid_body_encoding', status: 400, cause })
  }
}

/** A body that is not JSON (or a JSON scalar): 400 `invalid_json`. */
export class InvalidJsonError extends ServiceError {
  constructor({ cause }: { cause?: unknown } = {}) {
    super('Request body is not valid JSON.', { code: 'invalid_json', status: 400, cause })
  }
}

/** The body could not be read (the client went away mid-body): 400 `bad_request`. */
export class BodyReadError extends ServiceError {
  constructor({ cause }: { cause?: unknown } = {}) {
    super('The request body could not be read.', { code: 'bad_request', status: 400, cause })
  }
}
