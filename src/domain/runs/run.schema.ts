import { z } from 'zod'
import { limitQuery } from '../paging.schema.ts'

export const RUN_STATUSES = ['queued', 'running', 'completed', 'stopped', 'failed', 'budget_exhausted'] as const

/** Budgets' defaults and ceilings (config RUN_DEFAULT_MAX_* and RUN_CEILING_MAX_*). */
export type RunLimits = {
  defaults: { maxSteps: number; maxCredits: number; maxSeconds: number }
  ceilings: { maxSteps: number; maxCredits: number; maxSeconds: number }
}

/** `POST /agents/:id/runs`: the goal, and optionally the model and budgets (up to the ceilings). */
export const startRunSchema = (limits: RunLimits) =>
  z.strictObject({
    goal: z.string().trim().min(1).max(4000),
    model: z.string().min(1).max(100).optional(),
    maxSteps: z.number().int().min(1).max(limits.ceilings.maxSteps).optional(),
    maxCredits: z.number().int().min(1).max(limits.ceilings.maxCredits).optional(),
    maxSeconds: z.number().int().min(1).max(limits.ceilings.maxSeconds).optional(),
  })

/** A run's request as the front doors parse it (the configured ceilings are checked by `startRun`). */
export const startRunRequestSchema = startRunSchema({
  defaults: { maxSteps: 1, maxCredits: 1, maxSeconds: 1 },
  ceilings: { maxSteps: Number.MAX_SAFE_INTEGER, maxCredits: Number.MAX_SAFE_INTEGER, maxSeconds: Number.MAX_SAFE_INTEGER },
})
export type StartRunRequest = z.infer<typeof startRunRequestSchema>

/** `GET /agents/:id/runs`: `?limit=&cursor=&status=`. */
export const listRunsQuerySchema = z.strictObject({
  limit: limitQuery,
  cursor: z.string().max(200).optional(),
  status: z.enum(RUN_STATUSES).optional(),
})
export type ListRunsQuery = { limit: number; cursor?: string | undefined; status?: (typeof RUN_STATUSES)[number] | undefined }

/** The budgets' defaults and ceilings when config leaves them as they are (for the OpenAPI document). */
export const DEFAULT_RUN_LIMITS: RunLimits = {
  defaults: { maxSteps: 10, maxCredits: 500, maxSeconds: 600 },
  ceilings: { maxSteps: 50, maxCredits: 10_000, maxSeconds: 3600 },
}
