import { createServer, type Server } from 'node:http'
import { once } from 'node:events'

export type ReceivedSpan = {
  service: string
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  kind: number
  attributes: Record<string, unknown>
  status: number
}

/**
 * A collector's OTLP/HTTP traces endpoint on 127.0.0.1 (`POST /v1/traces`), decoding `http/json`
 * (ids as hex, as the OTLP/JSON encoding has them) into flat spans. Anything else is answered 415.
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(415).end()
        return
      }
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { resourceSpans?: any[] }
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '')
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind, attributes: attributesOf(s.attributes), status: s.status?.code ?? 0 })
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const addr = server.address()
  const endpoint = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`
  return {
    /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
    endpoint,
    spans,
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}

function attributesOf(list: Array<{ key: string; value: any }> | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]))
}

function valueOf(v: any): unknown {
  if (v == null) return undefined
  if ('stringValue' in v) return v.stringValue
  if ('intValue' in v) return Number(v.intValue)
  if ('doubleValue' in v) return v.doubleValue
  if ('boolValue' in v) return v.boolValue
  if ('arrayValue' in v) return (v.arrayValue.values ?? []).map(valueOf)
  return undefined
}
