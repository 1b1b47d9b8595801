/** One Server-Sent Event as the stream carried it. */
export type SseEvent = { id: string | undefined; event: string; data: string }

/**
 * The events of a `text/event-stream` body (the WHATWG format: `id:`, `event:`, `data:` lines,
 * comments, CRLF or LF), until the body ends. `idleMs`: a stream that sends nothing for that
 * long (the service sends a comment every 15 s) is given up, as one whose host vanished.
 */
export async function* parseSse(body: ReadableStream<Uint8Array>, { idleMs, onIdle }: { idleMs: number; onIdle(): void }): AsyncGenerator<SseEvent> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let fields: { id?: string; event?: string; data: string[] } = { data: [] }
  let timer = setTimeout(onIdle, idleMs)
  try {
    for (;;) {
      const { value, done } = await reader.read()
      clearTimeout(timer)
      if (done) return
      timer = setTimeout(onIdle, idleMs)
      buffer += decoder.decode(value, { stream: true })
      const lines = buffer.split(/\r\n|\r|\n/)
      buffer = lines.pop()!
      for (const line of lines) {
        if (line === '') {
          if (fields.data.length > 0) yield { id: fields.id, event: fields.event ?? 'message', data: fields.data.join('\n') }
          fields = { data: [] }
          continue
        }
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const name = colon < 0 ? line : line.slice(0, colon)
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
        if (name === 'data') fields.data.push(value)
        else if (name === 'id') fields.id = value
        else if (name === 'event') fields.event = value
      }
    }
  } finally {
    clearTimeout(timer)
    await reader.cancel().catch(() => {})
  }
}
