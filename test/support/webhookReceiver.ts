import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { once } from 'node:events'
import { Webhook } from 'standardwebhooks'

export type Received = { id: string; timestamp: string; signature: string; body: string; payload: { type: string; timestamp: string; data: any }; verifiedWith: string[] }

/**
 * A customer's webhook receiver on 127.0.0.1: it verifies each request with the `standardwebhooks`
 * package against the secrets it knows (refusing with 401 what none verifies) and answers what
 * `answer` says (200 by default). `received` holds the verified requests, in arrival order.
 */
export async function startReceiver() {
  const secrets: string[] = []
  const received: Received[] = []
  let answer: (r: Received, n: number) => { status: number; headers?: Record<string, string> } = () => ({ status: 200 })
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString()
      const verifiedWith = secrets.filter((s) => verifies(s, body, req.headers))
      if (verifiedWith.length === 0) {
        res.writeHead(401).end()
        return
      }
      const r: Received = {
        id: String(req.headers['webhook-id']), timestamp: String(req.headers['webhook-timestamp']), signature: String(req.headers['webhook-signature']),
        body, payload: JSON.parse(body), verifiedWith,
      }
      received.push(r)
      const a = answer(r, received.filter((x) => x.id === r.id).length)
      // 0: never answered (the sender's timeout or death ends the request).
      if (a.status !== 0) res.writeHead(a.status, a.headers).end('{}')
    })
  }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as { port: number }).port
  return {
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    port,
    received,
    trust: (secret: string) => void secrets.push(secret),
    forget: (secret: string) => void secrets.splice(secrets.indexOf(secret), 1),
    answerWith: (f: typeof answer) => void (answer = f),
    ofType: (type: string) => received.filter((r) => r.payload.type === type),
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

function verifies(secret: string, body: string, headers: IncomingHttpHeaders): boolean {
  try {
    new Webhook(secret).verify(body, {
      'webhook-id': String(headers['webhook-id']),
      'webhook-timestamp': String(headers['webhook-timestamp']),
      'webhook-signature': String(headers['webhook-signature']),
    })
    return true
  } catch {
    return false
  }
}
