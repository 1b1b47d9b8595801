import { z } from 'zod'
import { text } from '../util/text.ts'
import { policyPatchSchema } from './policy.ts'
import { presetSkills } from '../skills/builtinSkills.ts'

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'Must be a 0x-prefixed 20-byte hex address.')
  .transform((a) => a.toLowerCase())

export type AgentCatalogs = {
  models: ReadonlySet<string>
  /** The catalog's default model: a new agent that names no model gets it. */
  defaultModel: string
  skills: ReadonlySet<string>
  strategies: ReadonlySet<string>
}

/**
 * Agent request bodies (snake_case). Built from the catalogs so that an unknown model, skill or
 * strategy is a field error like any other. Unknown fields are refused, not dropped. On create,
 * `model` defaults to the catalog's default and `skills` to the strategy preset's (else none),
 * so `{ name, strategy }` alone makes a working agent.
 */
export function agentSchemas({ models, defaultModel, skills, strategies }: AgentCatalogs) {
  const model = z.string().refine((m) => models.has(m), 'Unknown model; see GET /api/v1/models.')
  const skillList = z
    .array(z.string().refine((s) => skills.has(s), 'Unknown skill; see GET /api/v1/skills.'))
    .max(20)
    .refine((l) => new Set(l).size === l.length, 'Skills must not repeat.')
  const strategy = z.string().refine((s) => strategies.has(s), 'Unknown strategy preset; see GET /api/v1/skills.')
  const fields = {
    name: text({ min: 1, max: 64, trim: true }),
    model,
    skills: skillList,
    system_prompt: text({ max: 8000 }).nullable(),
    payout_wallet: address.nullable(),
    persona: text({ max: 2000 }).nullable(),
    strategy: strategy.nullable(),
    temperature: z.number().min(0).max(2).nullable(),
    is_public: z.boolean(),
    public_description: text({ max: 1000 }).nullable(),
    policy: policyPatchSchema,
  }
  const create = z
    .strictObject({
      ...fields,
      model: fields.model.optional(),
      skills: fields.skills.optional(),
      system_prompt: fields.system_prompt.optional(),
      payout_wallet: fields.payout_wallet.optional(),
      persona: fields.persona.optional(),
      strategy: fields.strategy.optional(),
      temperature: fields.temperature.optional(),
      is_public: fields.is_public.optional(),
      public_description: fields.public_description.optional(),
      policy: fields.policy.optional(),
    })
    .transform(({ model, skills, ...rest }) => ({
      ...rest,
      model: model ?? defaultModel,
      skills: skills ?? (rest.strategy ? presetSkills(rest.strategy) : []),
    }))
  const update = z.strictObject(fields).partial()
  return { create, update }
}
export type AgentCreateBody = z.output<ReturnType<typeof agentSchemas>['create']>
export type AgentUpdateBody = z.output<ReturnType<typeof agentSchemas>['update']>

export const whitelistAddBody = z.strictObject({
  address,
  label: text({ min: 1, max: 64, trim: true }).optional(),
})
export const whitelistDeleteBody = z.strictObject({ address })
/** DELETE /agents/:id/whitelist may name the address as `?address=` instead of in the body. */
export const whitelistDeleteQuery = whitelistDeleteBody.partial()
