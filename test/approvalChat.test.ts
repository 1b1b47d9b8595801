import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startTestApp, type Api, type TestApp } from './support/app.ts'
import { startModelServer, type ModelServer } from './support/modelServer.ts'
import { answerAt, chatTurnEnds, lastToolResults, swapCall } from './support/scriptedChat.ts'

/**
 * A model's swap above the agent's approval threshold is a child wallet operation of its chat
 * turn that waits in `awaiting_approval`; the turn waits in `acting` and the model is told the
 * final outcome once an owner decides. Real server, real anvil, a scripted model server.
 */
let model: ModelServer
let app: TestApp
let api: Api
let trader: string

const pendingApprovals = async () => (await api('GET', `/approvals?status=pending&agentId=${trader}`)).body.approvals as Array<{ id: string }>

beforeAll(async () => {
  model = await startModelServer()
  app = await startTestApp({ OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', CHAT_WAIT_SECONDS: '1' }, { withChain: true })
  ;({ api } = await app.account())
  const policy = { max_trade_usd: '10000', max_daily_usd: '100000', require_approval_above_usd: '1000' }
  trader = (await api('POST', '/agents', { name: 'trader', skills: ['trading'], policy })).body.id
  expect((await api('POST', '/dev/faucet', { agentId: trader, eth: '5' })).status).toBe(200)
})
afterAll(async () => {
  await app?.close()
  await model?.stop()
})
beforeEach(() => model.mock.reset())

describe("a chat turn's money move (a swap, a launch) that needs approval", () => {
  for (const decision of ['approve', 'reject'] as const) {
    it(`waits for the owner; once it decides (${decision}), the model is told the outcome`, async () => {
      const text = `buy big, then ${decision}`
      answerAt(model, text, 0, { toolCalls: [swapCall('call_0', '0.7')] })
      answerAt(model, text, 1, { content: 'Reported.' })
      const res = await api('POST', `/agents/${trader}/chat`, { message: text })
      expect(res.status).toBe(202)
      await expect.poll(async () => (await pendingApprovals()).length, { timeout: 15_000 }).toBe(1)
      const [approval] = await pendingApprovals()
      expect((await api('GET', `/agents/${trader}/chat/${res.body.id}`)).body.status).toBe('acting')
      // The model has not been answered yet: it waits for the decision.
      expect(model.mock.getRequests()).toHaveLength(1)

      const decided = await api('POST', `/approvals/${approval!.id}/${decision}`, {})
      expect(decided.status).toBe(200)
      const turn = await chatTurnEnds(api, trader, res)
      expect(turn.status).toBe('completed')
      const [result] = lastToolResults(model)
      if (decision === 'approve') expect(result).toMatchObject({ status: 'confirmed', txHash: expect.stringMatching(/^0x/) })
      else expect(JSON.stringify(result)).toContain('approval_rejected')
    })
  }

  it("a model's self-funded launch above the threshold waits too; approved, it goes live and the model is told", async () => {
    const policy = { max_trade_usd: '10000', max_daily_usd: '100000', require_approval_above_usd: '1000' }
    const launcher = (await api('POST', '/agents', { name: 'launcher', skills: ['token-launch'], policy })).body.id
    expect((await api('POST', '/dev/faucet', { agentId: launcher, eth: '2', usdc: '5000' })).status).toBe(200)
    const text = 'launch with a big seed'
    const args = { venue: 'self-funded', symbol: 'MDL', name: 'Model Seed', quote: 'USDC', seedAmount: '2000' }
    answerAt(model, text, 0, { toolCalls: [{ id: 'call_launch', name: 'launch_token', arguments: JSON.stringify(args) }] })
    answerAt(model, text, 1, { content: 'Launched.' })
    const res = await api('POST', `/agents/${launcher}/chat`, { message: text })
    expect(res.status).toBe(202)
    const pending = async () => (await api('GET', `/approvals?status=pending&agentId=${launcher}`)).body.approvals as Array<{ id: string; kind: string }>
    await expect.poll(async () => (await pending()).length, { timeout: 15_000 }).toBe(1)
    const [approval] = await pending()
    expect(approval!.kind).toBe('launch')
    expect((await api('GET', `/agents/${launcher}/chat/${res.body.id}`)).body.status).toBe('acting')
    expect(model.mock.getRequests()).toHaveLength(1)
    expect((await api('POST', `/approvals/${approval!.id}/approve`, {})).status).toBe(200)
    const turn = await chatTurnEnds(api, launcher, res)
    expect(turn.status).toBe('completed')
    const [result] = lastToolResults(model)
    expect(result).toMatchObject({ tokenAddress: expect.stringMatching(/^0x/), txHash: expect.stringMatching(/^0x/) })
    expect((await api('GET', `/launch/${approval!.id}`)).body.status).toBe('live')
  })
})
