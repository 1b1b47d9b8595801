import { expect } from 'vitest'
import type { Api, ApiResponse } from './app.ts'
import type { ModelServer } from './modelServer.ts'
import { waitFor } from './waitFor.ts'

/** A request the scripted model server received, as far as these helpers read it. */
export type ScriptedRequest = { messages?: Array<{ role: string; content: string | null; tool_call_id?: string }> }

/** The messages of a request after its last user message (this turn's, or this run's). */
export function turnMessages(req: ScriptedRequest) {
  const all = req.messages ?? []
  return all.slice(all.map((m) => m.role).lastIndexOf('user') + 1)
}

/** The tool results a request carries for its turn. */
export const toolResults = (req: ScriptedRequest) => turnMessages(req).filter((m) => m.role === 'tool')

/** Scripts the model's answer to the request for `text` that carries `n` tool results so far. */
export const answerAt = (model: ModelServer, text: string, n: number, answer: Parameters<ModelServer['mock']['on']>[1]) =>
  model.mock.on({ predicate: (req) => JSON.stringify(req.messages).includes(text) && toolResults(req as ScriptedRequest).length === n }, answer)

/** The tool results the model was sent in its last request (parsed). */
export const lastToolResults = (model: ModelServer) =>
  toolResults(model.mock.getRequests().at(-1)!.body as ScriptedRequest).map((m) => JSON.parse(m.content ?? 'null'))

/** A `swap_execute` tool call of ETH into USDC, under the model's call id `id`. */
export const swapCall = (id: string, amountIn: string) => ({ id, name: 'swap_execute', arguments: JSON.stringify({ tokenIn: 'ETH', tokenOut: 'USDC', amountIn }) })

/** Follows the chat turn a `POST /agents/:id/chat` answered (200 or 202) until it completes or fails; answers it. */
export async function chatTurnEnds(api: Api, agentId: string, res: ApiResponse) {
  expect([200, 202], JSON.stringify(res.body)).toContain(res.status)
  let turn = res.body
  await waitFor(async () => {
    turn = (await api('GET', `/agents/${agentId}/chat/${res.body.id}`)).body
    return turn.status === 'completed' || turn.status === 'failed'
  }, 30_000)
  return turn
}
