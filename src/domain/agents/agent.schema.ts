import { z } from 'zod'
import { text } from '../util/text.ts'
import { policyPatchSchema } from './policy.ts'
import { presetRunInterval, presetSkills } from '../skills/builtinSkills.ts'
import { SKILL_REF } from '../skills/skill.schema.ts'

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'Must be a 0x-prefixed 20-byte hex address.')
  .transform((a) => a.toLowerCase())
/** An address funds are sent to (a whitelist entry, the payout wallet): never the zero address, where they burn. */
const recipient = address.refine((a) => !/^0x0{40}$/.test(a), 'Must not be the zero address: funds sent there are burned.')

/** An agent's mode: `live` trades on chain, `paper` is filled against the real pools into a virtual ledger. */
export const AGENT_MODES = ['live', 'paper'] as const
export type AgentMode = (typeof AGENT_MODES)[number]

export type AgentCatalogs = {
  models: ReadonlySet<string>
  /** The catalog's default model: a new agent that names no model gets it. */
  defaultModel: string
  /** The built-in skills; other entries of `skills` must name a custom skill (checked against the database by checkAgentSkills). */
  skills: ReadonlySet<string>
  strategies: ReadonlySet<string>
  /** The least non-zero `run_interval_seconds` (config RUN_MIN_INTERVAL_SECONDS); 60 unless given. */
  minRunIntervalSeconds?: number
}

/** The longest `run_interval_seconds`: one week. */
export const MAX_RUN_INTERVAL_SECONDS = 7 * 24 * 3600

/**
 * Agent request bodies (snake_case). Built from the catalogs so that an unknown model, skill or
 * strategy is a field error like any other. Unknown fields are refused, not dropped. On create,
 * `model` defaults to the catalog's default, `skills` and `run_interval_seconds` to the strategy
 * preset's (else none and 0), so `{ name, strategy }` alone makes a working agent.
 */
export function agentSchemas({ models, defaultModel, skills, strategies, minRunIntervalSeconds = 60 }: AgentCatalogs) {
  const model = z.string().refine((m) => models.has(m), 'Unknown model; see GET /api/v1/models.')
  const skillList = z
    .array(z.string().refine((s) => skills.has(s) || SKILL_REF.test(s), 'Unknown skill; see GET /api/v1/skills.'))
    .max(20)
    .refine((l) => new Set(l).size === l.length, 'Skills must not repeat.')
  const strategy = z.string().refine((s) => strategies.has(s), 'Unknown strategy preset; see GET /api/v1/skills.')
  const fields = {
    name: text({ min: 1, max: 64, trim: true }),
    model,
    skills: skillList,
    system_prompt: text({ max: 8000 }).nullable(),
    payout_wallet: recipient.nullable(),
    persona: text({ max: 2000 }).nullable(),
    strategy: strategy.nullable(),
    temperature: z.number().min(0).max(2).nullable(),
    is_public: z.boolean(),
    public_description: text({ max: 1000 }).nullable(),
    policy: policyPatchSchema,
    run_interval_seconds: z
      .number('Seconds between scheduled runs: 0 (never) or an integer.')
      .int('Seconds between scheduled runs: 0 (never) or an integer.')
      .min(0, 'At least 0 (0 = never).')
      .max(MAX_RUN_INTERVAL_SECONDS, `At most ${MAX_RUN_INTERVAL_SECONDS} seconds (a week).`)
      .refine((v) => v === 0 || v >= minRunIntervalSeconds, `0 (never) or at least ${minRunIntervalSeconds} seconds.`),
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
      run_interval_seconds: fields.run_interval_seconds.optional(),
      // Fixed at creation: a paper agent's money moves are simulated (docs/api.md, "Paper agents").
      mode: z.enum(AGENT_MODES, 'Either "live" or "paper".').optional(),
    })
    .transform(({ model, skills, run_interval_seconds, mode, ...rest }) => ({
      ...rest,
      mode: mode ?? 'live',
      model: model ?? defaultModel,
      skills: skills ?? (rest.strategy ? presetSkills(rest.strategy) : []),
      // The preset's interval, raised to the configured minimum when that is higher.
      run_interval_seconds: run_interval_seconds ?? (presetRunInterval(rest.strategy) && Math.max(presetRunInterval(rest.strategy), minRunIntervalSeconds)),
    }))
  // `allow_copy`: other accounts' mirrors may copy this agent's swaps while it is public (shown as `allowCopy`).
  const update = z.strictObject({ ...fields, allow_copy: z.boolean('true or false.') }).partial()
  return { create, update }
}
export type AgentCreateBody = z.output<ReturnType<typeof agentSchemas>['create']>
export type AgentUpdateBody = z.output<ReturnType<typeof agentSchemas>['update']>

export const whitelistAddBody = z.strictObject({
  address: recipient,
  label: text({ min: 1, max: 64, trim: true }).optional(),
})
export const whitelistDeleteBody = z.strictObject({ address })
/** DELETE /agents/:id/whitelist may name the address as `?address=` instead of in the body. */
export const whitelistDeleteQuery = whitelistDeleteBody.partial()
