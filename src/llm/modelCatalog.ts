import { readFileSync } from 'node:fs'
import { z } from 'zod'

export const modelSchema = z.strictObject({
  id: z.string().min(1).max(100),
  name: z.string().min(1),
  providerModel: z.string().min(1),
  inputCreditsPerMillion: z.number().int().min(0),
  outputCreditsPerMillion: z.number().int().min(0),
  contextWindow: z.number().int().positive(),
  /** Exactly one model of a catalog is the default: new agents get it when they name none. */
  default: z.boolean().default(false),
})
export type Model = z.infer<typeof modelSchema>

const catalogSchema = z.strictObject({
  models: z
    .array(modelSchema)
    .min(1)
    .refine((ms) => ms.filter((m) => m.default).length === 1, 'Exactly one model must have "default": true.')
    .refine((ms) => new Set(ms.map((m) => m.id)).size === ms.length, 'Model ids must not repeat.'),
})

const DEFAULT_CATALOG = new URL('./models.json', import.meta.url)

/**
 * Loads the model catalog (a JSON file; `MODELS_FILE` points at another one).
 *
 * @example
 * const models = loadModelCatalog(config.modelsFile)
 * models.get('gpt-4o-mini')?.inputCreditsPerMillion
 */
export function loadModelCatalog(path?: string): Map<string, Model> {
  const raw = JSON.parse(readFileSync(path ?? DEFAULT_CATALOG, 'utf8'))
  const parsed = catalogSchema.safeParse(raw)
  if (!parsed.success) throw new Error(`Invalid model catalog ${path ?? 'models.json'}: ${parsed.error.message}`)
  return new Map(parsed.data.models.map((m) => [m.id, m]))
}

/** The catalog's default model (a loaded catalog has exactly one). */
export function defaultModel(models: ReadonlyMap<string, Model>): Model {
  const found = [...models.values()].find((m) => m.default)
  if (!found) throw new Error('The model catalog has no default model.')
  return found
}
