import type { z } from 'zod'

/** One operation of the OpenAPI document, as its builders (openapi.ts, openapiWebhooks.ts) describe it. */
export type Op = {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete'
  path: string
  summary: string
  /** undefined: public; otherwise the key scope (or 'operator'). */
  auth?: 'read' | 'trade' | 'admin' | 'operator'
  body?: z.ZodType
  /** The body may be left out (its fields can come in the query instead). */
  bodyOptional?: boolean
  query?: z.ZodType
  /** Served outside /api/v1 (e.g. /metrics at the root). */
  atRoot?: boolean
  /** The tool server's JSON face: under /api, a bearer key only (no session). */
  toolServer?: boolean
  /** Answers a SIWE session cookie only (no key, no scope). */
  sessionOnly?: boolean
  /** The success body is not JSON (e.g. Prometheus text). */
  responseType?: string
  idempotency?: 'required' | 'honoured'
  status?: number
  /** JSON Schema of the 2xx body (without meta), where the document spells it out. */
  response?: object
}
