import { Router } from '@koa/router'
import type { Middleware } from 'koa'

/** Route modules that share the middleware run before any of their routes (authentication, limits). */
export type RouteGroup = { use: Middleware[]; routers: Router[] }

/**
 * The literal first segment of a layer's path: '/agents/:id' -> 'agents', and '/ops(?:\/|$)' (the
 * pattern @koa/router makes of the `use` of a module prefixed '/ops') -> 'ops'. None when the
 * segment can be anything: a parameter, a pattern, the `use` of a module without a prefix.
 */
const FIRST_SEGMENT = /^\/([\w.-]+)(?:\/|\(|$)/

const firstSegment = (path: string | RegExp): string | undefined => (typeof path === 'string' ? FIRST_SEGMENT.exec(path)?.[1] : undefined)

/** What `Router#routes()` makes: middleware that needs the router's fields on the context. */
type Routes = ReturnType<Router['routes']>

/** Runs `middleware` one after the other (each given the next as `next`), then `next`. */
function inOrder(middleware: Routes[]): Routes {
  return (ctx, next) => {
    const run = (i: number): Promise<unknown> => (i === middleware.length ? next() : Promise.resolve(middleware[i]!(ctx, () => run(i + 1))))
    return run(0)
  }
}

/**
 * Mounts route groups under `prefix` so that a request is matched against the route modules of
 * its first path segment only. @koa/router tests every route of a router against every request
 * (the API has about 120), which cost more CPU than the rest of a cached read: here each group
 * gets one router per segment, holding its middleware and only the modules with routes under
 * that segment (a module whose routes can start with anything joins every segment's router).
 *
 * Groups answer in order, each exactly as one router of all its modules would: its middleware
 * runs only when one of its routes matches path and method, and the routes matched by path are
 * recorded on `ctx.matched`, so a router's `allowedMethods()` further down still answers 405.
 *
 * The prefix and the first segment match in the case they are written in, and nothing else does.
 * @koa/router matches a route's path regardless of case but a router's `use` middleware only in
 * its own case: `/API/V1/OPS/nodes` used to reach the operator routes without the key check and
 * the operator check (both `use` middleware); it is a 404 now.
 *
 * @example
 * app.use(segmentRoutes('/api/v1', [
 *   { use: [ipLimit], routers: [publicRoutes(deps)] },
 *   { use: [authenticate(core)], routers: [agentRoutes(deps), walletRoutes(deps)] },
 * ]))
 */
export function segmentRoutes(prefix: string, groups: RouteGroup[]): Routes {
  const segmentsOf = (router: Router) => new Set(router.stack.map((layer) => firstSegment(layer.path)))
  const routersFor = (segment: string | undefined): Routes[] =>
    groups.flatMap(({ use, routers }) => {
      const serving = routers.filter((r) => {
        const segments = segmentsOf(r)
        return segments.has(undefined) || (segment !== undefined && segments.has(segment))
      })
      if (serving.length === 0) return []
      const router = new Router({ prefix })
      for (const m of use) router.use(m)
      for (const r of serving) router.use(r.routes())
      return [router.routes()]
    })

  const known = new Set(groups.flatMap(({ routers }) => routers.flatMap((r) => [...segmentsOf(r)])))
  const bySegment = new Map<string, Routes>()
  for (const segment of known) if (segment !== undefined) bySegment.set(segment, inOrder(routersFor(segment)))
  const anySegment = inOrder(routersFor(undefined))
  const start = `${prefix}/`

  return (ctx, next) => {
    const path = ctx.path
    if (!path.startsWith(start)) return next()
    const end = path.indexOf('/', start.length)
    const segment = path.slice(start.length, end === -1 ? undefined : end)
    return (bySegment.get(segment) ?? anySegment)(ctx, next)
  }
}

/**
 * Keeps, of the routes matched by path, those that name the path most literally (fewest
 * parameters), so that the `allowedMethods()` of the routers further down answer `Allow` for the
 * route the path means: `/swap/execute` is `POST /swap/execute`, not also `GET /swap/:id` with
 * `execute` as its id. Mount it after the routers that match, before any `allowedMethods()`.
 *
 * @example
 * app.use(segmentRoutes('/api/v1', groups))
 * app.use(literalRoutesFirst())
 * app.use(new Router().allowedMethods())
 */
export function literalRoutesFirst(): Middleware {
  return (ctx, next) => {
    const matched = (ctx as { matched?: Array<{ methods: string[]; paramNames: unknown[] }> }).matched
    const routes = matched?.filter((layer) => layer.methods.length > 0)
    if (matched && routes && routes.length > 1) {
      const fewest = Math.min(...routes.map((layer) => layer.paramNames.length))
      ;(ctx as { matched?: unknown[] }).matched = matched.filter((layer) => layer.methods.length === 0 || layer.paramNames.length === fewest)
    }
    return next()
  }
}
