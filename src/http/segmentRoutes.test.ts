import { once } from 'node:events'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa, { type Middleware } from 'koa'
import { Router } from '@koa/router'
import { afterEach, describe, expect, it } from 'vitest'
import { segmentRoutes } from './segmentRoutes.ts'

let server: Server | undefined
afterEach(() => {
  server?.close()
  server = undefined
})

/** An app of two groups (public, then a "key" group whose middleware records that it ran), as app.ts mounts them. */
async function start(): Promise<string> {
  const marks: Middleware = async (ctx, next) => {
    ctx.set('X-Group-Ran', 'key')
    await next()
  }
  const health = new Router()
  health.get('/health', (ctx) => void (ctx.body = { route: 'health' }))
  const skillsPublic = new Router()
  skillsPublic.get('/skills', (ctx) => void (ctx.body = { route: 'public skills' }))
  const agents = new Router({ prefix: '/agents' })
  agents.get('/:id', (ctx) => void (ctx.body = { route: 'agent', id: ctx.params.id }))
  const runs = new Router()
  runs.get('/agents/:id/runs', (ctx) => void (ctx.body = { route: 'runs' }))
  runs.get('/runs/:id', (ctx) => void (ctx.body = { route: 'run' }))
  const skills = new Router({ prefix: '/skills' })
  skills.get('/', (ctx) => void (ctx.body = { route: 'key skills' }))
  skills.post('/', (ctx) => void (ctx.body = { route: 'key skills post' }))
  const anyPath = new Router()
  anyPath.get('/:anything/echo', (ctx) => void (ctx.body = { route: 'echo', anything: ctx.params.anything }))

  const app = new Koa()
  app.use(
    segmentRoutes('/api/v1', [
      { use: [], routers: [health, skillsPublic] },
      { use: [marks], routers: [agents, runs, skills, anyPath] },
    ]),
  )
  app.use(new Router().allowedMethods())
  server = app.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`
}

const get = async (url: string, method = 'GET') => {
  const res = await fetch(url, { method })
  const text = await res.text()
  return { status: res.status, group: res.headers.get('x-group-ran'), allow: res.headers.get('allow'), body: res.headers.get('content-type')?.startsWith('application/json') ? (JSON.parse(text) as unknown) : text }
}

describe('segmentRoutes', () => {
  it('routes each request to the modules of its first segment, as one router per group would', async () => {
    const base = await start()
    expect(await get(`${base}/health`)).toMatchObject({ status: 200, group: null, body: { route: 'health' } })
    expect(await get(`${base}/agents/7`)).toMatchObject({ status: 200, group: 'key', body: { route: 'agent', id: '7' } })
    // Two modules share a segment; a module may serve several segments.
    expect(await get(`${base}/agents/7/runs`)).toMatchObject({ status: 200, body: { route: 'runs' } })
    expect(await get(`${base}/runs/3`)).toMatchObject({ status: 200, body: { route: 'run' } })
    // A trailing slash is taken, as @koa/router takes it; the prefix and the segment only in their own case.
    expect(await get(`${base}/agents/7/`)).toMatchObject({ status: 200, body: { route: 'agent' } })
    expect(await get(`${base}/AGENTS/7`)).toMatchObject({ status: 404, group: null })
    expect(await get(`${base.replace('/api/v1', '/API/V1')}/agents/7`)).toMatchObject({ status: 404, group: null })
  })

  it('answers with the first group that has the route; a group`s middleware runs only for its own routes', async () => {
    const base = await start()
    expect(await get(`${base}/skills`)).toMatchObject({ status: 200, group: null, body: { route: 'public skills' } })
    expect(await get(`${base}/skills`, 'POST')).toMatchObject({ status: 200, group: 'key', body: { route: 'key skills post' } })
    expect(await get(`${base}/nothing`)).toMatchObject({ status: 404, group: null })
    expect(await get(`${base}/health/more`)).toMatchObject({ status: 404, group: null })
  })

  it('a module whose routes can start with any segment is tried for every segment', async () => {
    const base = await start()
    expect(await get(`${base}/health/echo`)).toMatchObject({ status: 200, group: 'key', body: { route: 'echo', anything: 'health' } })
    expect(await get(`${base}/whatever/echo`)).toMatchObject({ status: 200, body: { anything: 'whatever' } })
  })

  it('leaves allowedMethods the routes matched by path: 405 with Allow', async () => {
    const base = await start()
    expect(await get(`${base}/runs/3`, 'DELETE')).toMatchObject({ status: 405, allow: 'HEAD, GET', group: null })
  })
})
