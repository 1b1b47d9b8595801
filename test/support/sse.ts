export type SseEvent = { id: string | null; event: string; data: any }

/**
 * Opens a Server-Sent Events stream with fetch (a GET, or a POST of `body` as JSON) and reads
 * events until the server closes it or `stopAfter` events arrived (then the connection is
 * dropped, as a client that goes away).
 */
export async function readSse(
  url: string,
  { apiKey, lastEventId, stopAfter = Infinity, onEvent, body }: { apiKey: string; lastEventId?: string; stopAfter?: number; onEvent?: (e: SseEvent) => void; body?: unknown },
): Promise<{ status: number; contentType: string | null; events: SseEvent[]; body?: any }> {
  const controller = new AbortController()
  const res = await fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`, accept: 'text/event-stream',
      ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: controller.signal,
  })
  if (!res.ok || !res.body) return { status: res.status, contentType: res.headers.get('content-type'), events: [], body: await res.json() }
  const events: SseEvent[] = []
  const decoder = new TextDecoder()
  let buffer = ''
  const reader = res.body.getReader()
  try {
    while (events.length < stopAfter) {
      const { value, done } = await reader.read()
      if (done) break
      buffer += decoder.decode(value, { stream: true })
      let cut: number
      while ((cut = buffer.indexOf('\n\n')) >= 0 && events.length < stopAfter) {
        const block = buffer.slice(0, cut)
        buffer = buffer.slice(cut + 2)
        const fields = new Map<string, string>()
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue
          const i = line.indexOf(':')
          fields.set(line.slice(0, i), line.slice(i + 1).trimStart())
        }
        if (fields.has('data')) {
          const e = { id: fields.get('id') ?? null, event: fields.get('event') ?? 'message', data: JSON.parse(fields.get('data')!) }
          events.push(e)
          onEvent?.(e)
        }
      }
    }
  } finally {
    controller.abort()
  }
  return { status: res.status, contentType: res.headers.get('content-type'), events }
}
