import { z } from 'zod'
import type { PolicyStamp } from '../policies/ports.ts'
import type { FieldErrors } from '../errors.ts'
import { emptyFieldErrors, fieldErrorsOf } from '../fieldErrors.ts'
import { text } from '../util/text.ts'
import type { ApprovalRequest } from '../approvals/approval.types.ts'

export const VENUES = ['venue-a', 'venue-b', 'self-funded'] as const
export type LaunchVenue = (typeof VENUES)[number]
export const launchVenue = z.enum(VENUES)

/**
 * Launch request bodies (camelCase). `quote` is checked against the venue's quote assets by the
 * use case; `seedAmount` applies to self-funded launches only. The single source of the HTTP
 * validation, the OpenAPI document and the launch tools' JSON Schema.
 */
export const launchBody = z.strictObject({
  agentId: z.uuid('Must be an agent id.'),
  symbol: z.string().regex(/^[A-Z0-9]{1,11}$/, '1-11 characters of A-Z and 0-9.'),
  name: text({ min: 1, max: 32, trim: true }),
  description: text({ max: 1000 }).optional(),
  logoUrl: z
    .url({ protocol: /^https$/, message: 'An https URL.' })
    .max(2048, 'At most 2048 characters.')
    .optional(),
  quote: z.string().min(1).max(11),
  seedAmount: z
    .string()
    .regex(/^\d{1,12}(\.\d{1,18})?$/, 'A decimal amount of the quote asset, e.g. "0.5".')
    .optional(),
})
export type LaunchBody = z.infer<typeof launchBody>

export const previewBody = launchBody.extend({ venue: launchVenue })

/** What a launch actor starts from (the launch machine's input). */
export type LaunchInput = {
  launchId: string
  accountId: string
  agentId: string
  venue: LaunchVenue
  symbol: string
  name: string
  description: string | null
  logoUrl: string | null
  quote: string
  /** Self-funded only: the quote-asset amount the agent seeds its pool with (decimal string). */
  seedAmount: string | null
  /** Set when the agent's policy asks an owner to approve the seed first (`awaiting_approval`). */
  approval?: ApprovalRequest | null | undefined
  /** The owners' policies' decision and the facts it was made on (docs/api.md, "Policies"); evaluated again at approval. */
  policy?: PolicyStamp | undefined
}

/**
 * A launch request as a front door hands it to the use cases: the account, the venue (undefined
 * when a preview's `venue` did not parse), the fields that parsed and the errors of those that
 * did not. The use case adds the venue's and the account's refusals of the well-formed fields,
 * so one 422 names every bad field.
 */
export type LaunchRequest<V extends LaunchVenue | undefined = LaunchVenue | undefined> = {
  accountId: string
  venue: V
  fields: Partial<LaunchBody>
  fieldErrors: FieldErrors
}

/**
 * Parses the body of a launch on `venue` field by field (a bad field does not hide the others).
 *
 * @example
 * await core.launchToken({ ...readLaunchRequest(accountId, 'venue-a', ctx.request.body), launchId })
 */
export function readLaunchRequest(accountId: string, venue: LaunchVenue, raw: unknown): LaunchRequest<LaunchVenue> {
  return { accountId, venue, ...readFields(launchBody, raw) }
}

/**
 * Parses a preview body, which names its venue.
 *
 * @example
 * await core.previewLaunch(readPreviewRequest(accountId, ctx.request.body))
 */
export function readPreviewRequest(accountId: string, raw: unknown): LaunchRequest {
  const venue = previewBody.shape.venue.safeParse(isObject(raw) ? raw.venue : undefined).data
  return { accountId, venue, ...readFields(previewBody, raw) }
}

const isObject = (raw: unknown): raw is Record<string, unknown> => raw !== null && typeof raw === 'object' && !Array.isArray(raw)

function readFields(schema: z.ZodObject, raw: unknown): { fields: Partial<LaunchBody>; fieldErrors: FieldErrors } {
  const parsed = schema.safeParse(raw)
  const fields: Record<string, unknown> = {}
  const fieldErrors = parsed.success ? emptyFieldErrors() : fieldErrorsOf(parsed.error)
  if (!isObject(raw)) return { fields, fieldErrors }
  for (const key of Object.keys(launchBody.shape) as Array<keyof LaunchBody>) {
    if (fieldErrors[key]) continue
    const r = launchBody.shape[key].safeParse(raw[key])
    if (r.success && r.data !== undefined) fields[key] = r.data
  }
  return { fields: fields as Partial<LaunchBody>, fieldErrors }
}
