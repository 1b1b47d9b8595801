import { Router } from '@koa/router'
import type { Context } from 'koa'
import { randomUUID } from 'node:crypto'
import { PassThrough } from 'node:stream'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { parse, uuidParam, rejectQuery } from '../validate.ts'
import { chatRequestSchema, listMessagesQuerySchema, type ChatRequest } from '../../domain/chat/chat.schema.ts'
import type { StartChatTurnInput } from '../../domain/chat/startChatTurn.ts'
import { principalOf, requireScope } from '../middleware/auth.ts'
import { ChatTurnFailedError, NotFoundError, ServiceError } from '../../domain/errors.ts'
import type { Core } from '../../app/coreApi.ts'
import { followActorEvents, streamActorEvents, type ActorEventsOptions } from '../actorEvents.ts'

const param = (ctx: Context, name: string, what: string): string => {
  const id = (ctx.params as Record<string, string | undefined>)[name]
  if (!uuidParam.safeParse(id).success) throw new NotFoundError(what)
  return id as string
}

/** A streamed turn: `stream: true` in the body, or `Accept: text/event-stream` alone. */
const wantsStream = (ctx: Context, request: ChatRequest) => request.stream === true || (ctx.get('Accept') ?? '').includes('text/event-stream')

/**
 * Hosted chat: `POST /agents/:id/chat` runs one chat turn (an actor) and answers when it ends
 * (200 with the answer), after the wait (202 with `{ id, status }`), or as Server-Sent Events;
 * `GET /agents/:id/chat/:turnId` reads a turn; `GET /agents/:id/messages` pages the history.
 */
export function chatRoutes({ core }: AppDeps): Router {
  const router = new Router({ prefix: '/agents' })
  const account = (ctx: Context) => principalOf(ctx).accountId

  router.post('/:id/chat', rejectQuery, requireScope('trade'), async (ctx) => {
    const agentId = param(ctx, 'id', 'Agent')
    const input = { accountId: account(ctx), agentId, request: parse(chatRequestSchema, ctx.request.body ?? {}) }
    // `Accept: text/event-stream` alone asks for a streamed turn too.
    if (wantsStream(ctx, input.request)) return streamTurn(ctx, core, { ...input, request: { ...input.request, stream: true } })
    const { turnId } = await core.startChatTurn(input)
    const outcome = await core.awaitChatTurn({ turnId })
    if (outcome.done) ok(ctx, outcome.answer)
    else ok(ctx, outcome.pending, 202)
  })

  router.get('/:id/chat/:turnId', rejectQuery, requireScope('read'), async (ctx) => {
    const outcome = await core.getChatTurn({ accountId: account(ctx), agentId: param(ctx, 'id', 'Agent'), turnId: param(ctx, 'turnId', 'Chat turn') })
    if (outcome.done) ok(ctx, outcome.answer)
    else ok(ctx, outcome.pending, 202)
  })

  // Server-Sent Events: the turn's states as they commit, until `completed` or `failed` (resumable with Last-Event-ID).
  router.get('/:id/chat/:turnId/events', rejectQuery, requireScope('read'), async (ctx) => {
    const input = { accountId: account(ctx), agentId: param(ctx, 'id', 'Agent'), turnId: param(ctx, 'turnId', 'Chat turn') }
    await streamActorEvents(ctx, core.actorEvents, turnEvents(core, input))
  })

  router.get('/:id/messages', requireScope('read'), async (ctx) => {
    const agentId = param(ctx, 'id', 'Agent')
    ok(ctx, await core.listMessages({ accountId: account(ctx), agentId, query: parse(listMessagesQuerySchema, ctx.query) }))
  })
  return router
}

const TURN_FINAL = new Set(['completed', 'failed'])

/**
 * A turn's status events: `data` is `{ id, status }` while it runs, the answer object once it
 * `completed`, `{ id, status, error, code }` once it `failed`.
 */
function turnEvents(core: Core, input: { accountId: string; agentId: string; turnId: string }): ActorEventsOptions<object> {
  const read = () =>
    core.getChatTurn(input).then(
      (outcome): object => (outcome.done ? outcome.answer : outcome.pending),
      (err: unknown) => {
        if (err instanceof ChatTurnFailedError) return { id: input.turnId, status: 'failed', error: err.message, code: err.code }
        throw err
      },
    )
  return {
    actorId: input.turnId,
    kind: 'chatturn',
    read,
    isFinal: (status) => TURN_FINAL.has(status),
    asOf: (turn, status) => (TURN_FINAL.has(status) ? { ...turn, status } : { id: input.turnId, status }),
  }
}

/**
 * Answers a turn as Server-Sent Events: `status` (with `id:`, the journal's sequence number, as
 * `GET /agents/:id/chat/:turnId/events` sends it: a stream cut by its node's death resumes there
 * with `Last-Event-ID`), `delta` (text as the provider streams it), `tool_call`,
 * `tool_result`, then `done` (the answer object) or `error` (`{ error, code }`). The listener is
 * on before the turn starts; a refusal at the start is a plain JSON error. A client that goes
 * away stops the events, not the turn.
 */
async function streamTurn(ctx: Context, core: Core, input: StartChatTurnInput) {
  const turnId = randomUUID()
  const out = new PassThrough()
  const send = (event: string, data: unknown) => void out.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  const off = core.subscribeChatTurn(turnId, (e) => {
    const { type, ...data } = e
    send(type, data)
  })
  try {
    await core.startChatTurn({ ...input, turnId })
  } catch (err) {
    off()
    throw err
  }
  ctx.req.socket.setTimeout(0)
  ctx.status = 200
  ctx.set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' })
  ctx.body = out
  const follower = await followActorEvents(out, core.actorEvents, turnEvents(core, { ...input, turnId }), 0)
  ctx.res.on('close', follower.stop)
  void core
    .awaitChatTurn({ turnId })
    // The turn's final status event goes before `done` (the follower reads the commit that ended it).
    .then(async (outcome) => (outcome.done ? (await follower.ended, outcome) : outcome))
    .then(
      (outcome) =>
        outcome.done
          ? send('done', { ...outcome.answer, meta: { requestId: ctx.state.requestId as string, timestamp: new Date().toISOString() } })
          : send('error', { error: 'The turn is still running; read it later with GET /agents/:id/chat/:turnId.', code: 'turn_pending', ...outcome.pending }),
      (err: unknown) =>
        send('error', err instanceof ServiceError ? { error: err.message, code: err.code } : { error: 'Internal error.', code: 'internal_error' }),
    )
    .finally(() => {
      off()
      follower.stop()
      out.end()
    })
}
