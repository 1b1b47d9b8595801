import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { operationsOf, type Operation } from './support/openapiArbitraries.ts'
import { TOOLS } from '../src/tools/registry.ts'
import { toolArgs } from '../src/tools/callTool.ts'

// A list filtered by an agent the caller cannot see (another account's, or no agent at all) is a
// 404 not_found, as every route addressing that agent answers: over every list route of the
// OpenAPI document and every read tool of the tool server.
let app: TestApp
let alice: { accountId: string; apiKey: string; api: Api }
let bob: { accountId: string; apiKey: string; api: Api }
let ops: Operation[]
let aliceAgent: string
let bobAgent: string

const newAgent = async (api: Api, name: string) => {
  const res = await api('POST', '/agents', { name, model: 'gpt-4o-mini', skills: [] })
  expect(res.status).toBe(201)
  return res.body.id as string
}

beforeAll(async () => {
  app = await startTestApp({}, { withChain: true })
  alice = await app.account({ name: 'alice' })
  bob = await app.account({ name: 'bob' })
  aliceAgent = await newAgent(alice.api, 'mine')
  bobAgent = await newAgent(bob.api, 'theirs')
  const doc = (await (await fetch(`${app.url}/api/v1/openapi.json`)).json()) as Parameters<typeof operationsOf>[0]
  ops = operationsOf(doc)
}, 120_000)
afterAll(async () => {
  await app?.close()
})

const AGENT_FILTER = /^agent_?id$/i

describe('a list filtered by an agent', () => {
  it('is 404 not_found for another account\'s agent or an unknown id, on every list route of the document; 200 for an own agent', async () => {
    const filtered = ops.filter((op) => op.method === 'GET' && op.scope !== 'operator' && op.pathParams.length === 0 && Object.keys(op.query).some((q) => AGENT_FILTER.test(q)))
    expect(filtered.map((op) => op.path).sort()).toEqual(expect.arrayContaining(['/approvals', '/automations', '/fees/earnings', '/wallet/portfolio']))
    const api = apiClient(`${app.url}`, alice.apiKey)
    const seen: string[] = []
    for (const op of filtered) {
      for (const name of Object.keys(op.query).filter((q) => AGENT_FILTER.test(q))) {
        const url = (agent: string) => `${op.base}${op.path}?${name}=${agent}`
        for (const [who, agent] of [['another account\'s', bobAgent], ['unknown', randomUUID()]] as const) {
          const res = await api('GET', url(agent))
          if (res.status !== 404 || res.body.code !== 'not_found') seen.push(`${op.path}?${name}= ${who}: ${res.status} ${JSON.stringify(res.body).slice(0, 100)}`)
        }
        const own = await api('GET', url(aliceAgent))
        if (own.status !== 200) seen.push(`${op.path}?${name}= own: ${own.status} ${JSON.stringify(own.body).slice(0, 100)}`)
      }
    }
    expect(seen).toEqual([])
  })

  it("is 404 on every agent's list addressed by path for another account's agent", async () => {
    const lists = ops.filter((op) => op.method === 'GET' && op.path.startsWith('/agents/{id}/') && op.pathParams.length === 1 && op.scope !== 'operator')
    expect(lists.length).toBeGreaterThan(4)
    const seen: string[] = []
    for (const op of lists) {
      const res = await apiClient(`${app.url}`, alice.apiKey)('GET', `${op.base}${op.path.replace('{id}', bobAgent)}`, undefined, { accept: 'application/json' })
      if (res.status !== 404 || res.body?.code !== 'not_found') seen.push(`${op.path}: ${res.status}`)
    }
    expect(seen).toEqual([])
  })

  it('a read tool of the tool server given another account\'s agent_id or an unknown one answers not_found (list_automations among them)', async () => {
    // Every read tool that acts for an agent and needs no argument but the agent.
    const tools = TOOLS.filter((t) => t.scope === 'read' && t.agent !== 'none' && toolArgs(t).safeParse({}).success)
    expect(tools.map((t) => t.name)).toContain('list_automations')
    const mcp = apiClient(`${app.url}/api/mcp`, alice.apiKey)
    const seen: string[] = []
    for (const t of tools) {
      for (const agent of [bobAgent, randomUUID()]) {
        const res = await mcp('POST', '/call', { name: t.name, arguments: { agent_id: agent } })
        if (res.status !== 404 || res.body.code !== 'not_found') seen.push(`${t.name}: ${res.status} ${JSON.stringify(res.body).slice(0, 100)}`)
      }
    }
    expect(seen).toEqual([])
    const own = await mcp('POST', '/call', { name: 'list_automations', arguments: { agent_id: aliceAgent } })
    expect({ status: own.status, automations: own.body.result?.automations }).toEqual({ status: 200, automations: [] })
  })
})
