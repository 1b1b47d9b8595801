import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { z } from 'zod'

export const modelSchema = z.strictObject({
  id: z.string().min(1).max(100),
  name: z.string().min(1),
  /** The model name sent to the provider (OPENAI_BASE_URL). */
  providerModel: z.string().min(1),
  /** Credits per million prompt / completion tokens (1 credit = 0.001 USD). */
  inputCreditsPerMillion: z.number().int().min(0),
  outputCreditsPerMillion: z.number().int().min(0),
  contextWindow: z.number().int().positive(),
  supportsTools: z.boolean(),
  /** Exactly one entry of a catalog is the default (new agents, chat without `model`). */
  default: z.boolean().default(false),
})
export type Model = z.infer<typeof modelSchema>

const catalogSchema = z.strictObject({ models: z.array(modelSchema).min(1) }).superRefine(({ models }, ctx) => {
  const defaults = models.filter((m) => m.default).map((m) => m.id)
  if (defaults.length !== 1) {
    ctx.addIssue({
      code: 'custom',
      path: ['models'],
      message: `exactly one model must have "default": true (found ${defaults.length}${defaults.length ? `: ${defaults.join(', ')}` : ''})`,
    })
  }
  const seen = new Set<string>()
  models.forEach((m, i) => {
    if (seen.has(m.id)) ctx.addIssue({ code: 'custom', path: ['models', i, 'id'], message: `duplicate id "${m.id}"` })
    seen.add(m.id)
  })
})

const BUILT_IN_CATALOG = fileURLToPath(new URL('./models.json', import.meta.url))

/**
 * Loads and validates the model catalog: the built-in `models.json`, or the file named by
 * `MODEL_CATALOG` (formerly `MODELS_FILE`). Any problem, including zero or several defaults, is an
 * error naming the file, so the service refuses to boot with it.
 *
 * @example
 * const models = loadModelCatalog(config.modelsFile)
 * models.get('gpt-4o-mini')?.inputCreditsPerMillion
 * defaultModelOf(models).id
 */
export function loadModelCatalog(path?: string): Map<string, Model> {
  const file = path ?? BUILT_IN_CATALOG
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'))
  } catch (err) {
    throw new Error(`Invalid model catalog ${file}: ${err instanceof Error ? err.message : String(err)}`)
  }
  const parsed = catalogSchema.safeParse(raw)
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')
    throw new Error(`Invalid model catalog ${file}: ${problems}`)
  }
  return new Map(parsed.data.models.map((m) => [m.id, m]))
}

/**
 * The catalog's one default model (validated at load, so it is always there).
 *
 * @example
 * const model = body.model ?? defaultModelOf(deps.models).id
 */
export function defaultModelOf(models: ReadonlyMap<string, Model>): Model {
  for (const m of models.values()) if (m.default) return m
  throw new Error('The model catalog has no default model.')
}

/** A catalog entry as `GET /models` shows it: prices and limits, never where or how it is called. */
export function modelView(m: Model) {
  return {
    id: m.id,
    name: m.name,
    providerModel: m.providerModel,
    inputCreditsPerMillion: m.inputCreditsPerMillion,
    outputCreditsPerMillion: m.outputCreditsPerMillion,
    contextWindow: m.contextWindow,
    supportsTools: m.supportsTools,
    default: m.default,
  }
}
