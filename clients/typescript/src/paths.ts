import type { paths } from './openapi.gen.ts'

/** An operation whose `Idempotency-Key` the caller may leave out: the client then sends a fresh one. */
type KeyOptional<Op> = Op extends { parameters: { header?: infer H } }
  ? [H] extends [undefined] ? Op : Omit<Op, 'parameters'> & { parameters: Omit<Op['parameters'], 'header'> & { header?: Partial<NonNullable<H>> } }
  : Op
/** The document's paths as the client takes them: every `Idempotency-Key` optional. */
export type ClientPaths = { [P in keyof paths]: { [M in keyof paths[P]]: KeyOptional<paths[P][M]> } }
