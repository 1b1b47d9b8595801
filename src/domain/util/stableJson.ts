/**
 * `JSON.stringify` with every object's keys in sorted order: the same text for the same data,
 * whatever order its keys were built in. A machine that puts JSON text in its context uses it:
 * an event's objects come back from the journal (jsonb) with their keys reordered, and a
 * transition must give the same snapshot when it is replayed from there.
 *
 * @example
 * stableJson({ b: 1, a: { d: 2, c: 3 } }) // '{"a":{"c":3,"d":2},"b":1}'
 */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return v
    const o = v as Record<string, unknown>
    return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]))
  })
}
