import type { paths } from './openapi.gen.ts'

/** An operation whose `Idempotency-Key` the caller may leave out: the client then sends a fresh one. */
type KeyOptional<Op> = Op extends { parameters: { header?: infer H } }
  ? [H] extends [undefined] ? Op : Omit<Op, 'parameters'> & { parameters: Omit<Op['parameters'], 'header'> & { header?: Partial<NonNullable<H>> } }
  : Op
/** The document's paths as the client takes them: every `Idempotency-Key` optional. */
export type ClientPaths = { [P in keyof paths]: { [M in keyof paths[P]]: KeyOptional<paths[P][M]> } }

/** An actor-backed resource (a launch, swap, run, chat turn): the GET's answer, of which the client relies on `id` and `status`. */
export type Resource = { id: string; status: string; [field: string]: unknown }
/** A JSON object the document gives no schema for. */
export type JsonObject = { [field: string]: unknown }
/**
 * The operations whose answer is a launch or a swap: the document gives their bodies no schema,
 * the client types them as a `Resource` (what it follows them by).
 */
export type ResourceOperation =
  | 'post /launch/venue-a' | 'post /launch/venue-b' | 'post /launch/self-funded' | 'get /launch/{id}'
  | 'post /swap/execute' | 'get /swap/{id}'
