import { ServiceError } from '../domain/errors.ts'

/** The body (after decoding its Content-Encoding) is over the limit: 413 `payload_too_large`. */
export class PayloadTooLargeError extends ServiceError {
  constructor({ limitBytes, closeConnection = true }: { limitBytes: number; closeConnection?: boolean }) {
    // When the rest of the body was not read, the connection closes after the answer.
    super(`Request body exceeds ${limitBytes / 1024 / 1024} MB.`, {
      code: 'payload_too_large',
      status: 413,
      ...(closeConnection ? { headers: { Connection: 'close' } } : {}),
    })
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

/** 405 `method_not_allowed`, naming the methods the path takes when known. */
export class MethodNotAllowedError extends ServiceError {
  constructor({ allow, notImplemented = false }: { allow?: string | undefined; notImplemented?: boolean } = {}) {
    super(notImplemented ? 'Method not implemented.' : 'Method not allowed on this path.', {
      code: 'method_not_allowed',
      status: 405,
      ...(allow ? { headers: { Allow: allow } } : {}),
    })
  }
}

/** A request body that is not JSON: 415 `unsupported_media_type`. */
export class UnsupportedMediaTypeError extends ServiceError {
  constructor() {
    super('Send application/json.', { code: 'unsupported_media_type', status: 415 })
  }
}

/** Any other client error raised by koa or its libraries: 400 `bad_request`. */
export class BadRequestError extends ServiceError {
  constructor() {
    super('Bad request.', { code: 'bad_request', status: 400 })
  }
}

/** A header with a malformed value: 400 `invalid_header`, naming the header. */
export class InvalidHeaderError extends ServiceError {
  constructor({ header, message }: { header: string; message: string }) {
    super(message, { code: 'invalid_header', status: 400, fieldErrors: { [header]: 'Invalid value.' } })
  }
}
