/**
 * Listeners per key: `on` adds one and answers its removal, `emit` calls a key's listeners. A
 * key whose last listener is removed is forgotten, so `has` and `keys` name only keys somebody
 * listens to.
 *
 * @example
 * const listeners = createKeyedListeners<string>()
 * const off = listeners.on('turn-1', (text) => send(text))
 * listeners.emit('turn-1', 'hello')
 * off()
 */
export function createKeyedListeners<T>() {
  const byKey = new Map<string, Set<(value: T) => void>>()
  return {
    on(key: string, listener: (value: T) => void): () => void {
      let set = byKey.get(key)
      if (!set) byKey.set(key, (set = new Set()))
      set.add(listener)
      return () => {
        set.delete(listener)
        if (set.size === 0 && byKey.get(key) === set) byKey.delete(key)
      }
    },
    emit(key: string, value: T): void {
      for (const l of byKey.get(key) ?? []) l(value)
    },
    has: (key: string) => byKey.has(key),
    keys: () => [...byKey.keys()],
  }
}
