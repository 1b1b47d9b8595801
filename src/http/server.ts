import { randomUUID } from 'node:crypto'
import { createServer, STATUS_CODES, type Server } from 'node:http'
import type { Duplex } from 'node:stream'
import type Koa from 'koa'
import type { Logger } from '../logger.ts'

type ClientError = Error & { code?: string }

/** What a request Node's HTTP parser refused is answered with, by the parser's error code. */
export function clientErrorAnswer(code: string | undefined): { status: number; code: string; error: string } {
  if (code === 'HPE_HEADER_OVERFLOW') return { status: 431, code: 'headers_too_large', error: 'Request headers are too large (16 KB at most).' }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, code: 'request_timeout', error: 'The request took too long to arrive.' }
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return { status: 413, code: 'payload_too_large', error: 'Chunk extensions are too large.' }
  return { status: 400, code: 'bad_request', error: 'The request is not valid HTTP/1.1 (method, request line or headers).' }
}

/**
 * The HTTP server of the app. Requests that Node's parser refuses (an unknown method, a bad
 * request line, oversized headers) never reach Koa; its `clientError` hook answers them in the
 * error envelope with an `X-Request-Id`, as every other response is.
 *
 * @example
 * const server = createHttpServer(createApp(services), { logger })
 * server.listen(config.port, config.host)
 */
export function createHttpServer(app: Koa, { logger }: { logger: Logger }): Server {
  const server = createServer(app.callback())
  server.on('clientError', (err: ClientError, socket: Duplex) => {
    // Nothing to answer on a socket that is gone, or that is already sending a response.
    const busy = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent
    if (err.code === 'ECONNRESET' || !socket.writable || busy) {
      socket.destroy()
      return
    }
    const answer = clientErrorAnswer(err.code)
    const requestId = randomUUID()
    logger.debug({ requestId, code: err.code }, 'request refused by the HTTP parser')
    const body = JSON.stringify({ error: answer.error, code: answer.code })
    socket.end(
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    )
  })
  return server
}
