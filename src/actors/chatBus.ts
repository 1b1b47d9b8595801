/** What a running chat turn tells the requests that follow it live (Server-Sent Events). */
export type ChatBusEvent =
  | { type: 'delta'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'tool_result'; id: string; name: string; status: string; result: unknown }

type Listener = (event: ChatBusEvent) => void

/**
 * An in-process bus keyed by turn id: the model-call effect publishes the provider's text as it
 * streams, the tool-call effect each call and its result; a streaming request subscribes before
 * the turn starts. Nothing is kept: an event with no listener is dropped (the durable record is
 * the turn and its messages).
 */
export function createChatBus() {
  const listeners = new Map<string, Set<Listener>>()
  return {
    publish(key: string, event: ChatBusEvent): void {
      for (const l of listeners.get(key) ?? []) l(event)
    },
    /** Returns the unsubscribe. */
    subscribe(key: string, listener: Listener): () => void {
      let set = listeners.get(key)
      if (!set) listeners.set(key, (set = new Set()))
      set.add(listener)
      return () => {
        set.delete(listener)
        if (set.size === 0 && listeners.get(key) === set) listeners.delete(key)
      }
    },
  }
}

export type ChatBus = ReturnType<typeof createChatBus>
