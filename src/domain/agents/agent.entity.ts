import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

export const AgentSchema = defineEntity({
  name: 'Agent',
  tableName: 'agent',
  properties: {
    id: p.uuid().primary(),
    accountId: p.uuid(),
    name: p.text(),
    model: p.text(),
    skills: p.array(),
    systemPrompt: p.text().nullable(),
    payoutWallet: p.text().nullable(),
    persona: p.text().nullable(),
    strategy: p.text().nullable(),
    temperature: p.double().nullable(),
    isPublic: p.boolean().default(false),
    publicDescription: p.text().nullable(),
    runIntervalSeconds: p.integer().default(0),
    mode: p.text().default('live'),
    policy: p.json<Record<string, unknown>>(),
    walletAddress: p.text(),
    walletKeyEncrypted: p.text().lazy(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
})
export type Agent = InferEntity<typeof AgentSchema>

export const AgentWhitelistSchema = defineEntity({
  name: 'AgentWhitelist',
  tableName: 'agent_whitelist',
  properties: {
    agentId: p.uuid().primary(),
    address: p.text().primary(),
    accountId: p.uuid(),
    label: p.text().nullable(),
    usableAt: p.datetime(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  primaryKeys: ['agentId', 'address'],
})
export type AgentWhitelist = InferEntity<typeof AgentWhitelistSchema>
