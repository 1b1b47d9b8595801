/** A use case with its dependencies bound: `fn(deps, ...args)` as `(...args) => …`. */
export type Bound<F> = F extends (deps: never, ...args: infer A) => infer R ? (...args: A) => R : never
