import { MAX_NOTIFY_PAYLOAD, type NodeBus } from '../runtime/index.ts'
import { createKeyedListeners } from '../runtime/index.ts'

/** What a running chat turn tells the requests that follow it live (Server-Sent Events). */
export type ChatBusEvent =
  | { type: 'delta'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'tool_result'; id: string; name: string; status: string; result: unknown }

const CHANNEL = 'chat_stream'

/**
 * A bus keyed by turn id: the model-call effect publishes the provider's text as it streams,
 * the tool-call effect each call and its result; a streaming request subscribes before the turn
 * starts. Nothing is kept: an event with no listener is dropped (the durable record is the turn
 * and its messages). With a node bus, an event no request of this process listens to goes to
 * the other nodes (the turn's effect may run on a node other than the one holding the stream).
 *
 * @example
 * const bus = createChatBus(nodeBus)
 * const off = bus.subscribe(turnId, (e) => send(e))
 */
export function createChatBus(nodes?: NodeBus) {
  const listeners = createKeyedListeners<ChatBusEvent>()
  nodes?.subscribe(CHANNEL, (payload) => {
    const { key, event } = JSON.parse(payload) as { key: string; event: ChatBusEvent }
    listeners.emit(key, event)
  })
  return {
    publish(key: string, event: ChatBusEvent): void {
      if (listeners.has(key) || !nodes) return listeners.emit(key, event)
      const payload = JSON.stringify({ key, event })
      // A tool result too large for a NOTIFY is left to the turn's stored messages.
      if (Buffer.byteLength(payload) < MAX_NOTIFY_PAYLOAD) nodes.publish(CHANNEL, payload)
    },
    /** Returns the unsubscribe. */
    subscribe: listeners.on,
  }
}

export type ChatBus = ReturnType<typeof createChatBus>
