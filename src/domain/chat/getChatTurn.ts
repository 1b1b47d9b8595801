import { ChatTurnFailedError, NotFoundError } from '../errors.ts'
import { chatAnswerOf } from './startChatTurn.ts'
import type { ChatTurns, ChatTurnState } from './ports.ts'

/** A turn that has not ended yet, as a 202 shows it. */
export type PendingTurn = { id: string; status: string }

/**
 * The outcome of a turn for its request: the answer object when it completed, the turn's own
 * error (e.g. 502 `model_provider_error`, 402 `insufficient_credits`) thrown when it failed, or
 * `{ id, status }` while it is still thinking or acting.
 */
export function turnOutcome(turn: ChatTurnState): { done: true; answer: ReturnType<typeof chatAnswerOf> } | { done: false; pending: PendingTurn } {
  if (turn.status === 'failed') throw new ChatTurnFailedError(turn.error ?? { code: 'chat_failed', message: 'The chat turn failed.', status: 502 })
  if (turn.status === 'completed') return { done: true, answer: chatAnswerOf(turn) }
  return { done: false, pending: { id: turn.id, status: turn.status } }
}

/**
 * Waits for a turn (woken by its commits, never polling) up to `waitMs`, then answers its outcome.
 *
 * @example
 * const outcome = await awaitChatTurn({ turns }, { turnId, waitMs: 60_000 })
 */
export async function awaitChatTurn({ turns }: { turns: ChatTurns }, { turnId, waitMs }: { turnId: string; waitMs: number }) {
  const turn = await turns.wait(turnId, waitMs)
  if (!turn) throw new NotFoundError('Chat turn')
  return turnOutcome(turn)
}

/**
 * One turn of an agent of the account (404 for another account's or agent's).
 *
 * @example
 * const outcome = await getChatTurn({ turns }, { accountId, agentId, turnId })
 */
export async function getChatTurn({ turns }: { turns: ChatTurns }, input: { accountId: string; agentId: string; turnId: string }) {
  const turn = await turns.get(input.turnId)
  if (!turn || turn.accountId !== input.accountId || turn.agentId !== input.agentId) throw new NotFoundError('Chat turn')
  return turnOutcome(turn)
}
