import { Router } from '@koa/router'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { noBody, parse, rejectQuery } from '../validate.ts'
import { SESSION_COOKIE } from '../middleware/auth.ts'
import { siweBody } from '../../domain/accounts/account.schema.ts'
import { UnauthorizedError } from '../../domain/errors.ts'

/** Sign-In with Ethereum for the dashboard: nonce, sign-in (session cookie + CSRF token), the current session (or whether there is one), logout. */
export function authRoutes({ core, config }: AppDeps): Router {
  const router = new Router({ prefix: '/auth' })
  router.get('/nonce', rejectQuery, async (ctx) => {
    ok(ctx, await core.issueNonce())
  })
  router.post('/siwe', rejectQuery, async (ctx) => {
    const body = parse(siweBody, ctx.request.body)
    // Never the request's Host header: a phishing site could forward a victim's signature.
    const domains = config.siweDomain ? [config.siweDomain] : [`127.0.0.1:${config.port}`, `localhost:${config.port}`]
    const { token, csrfToken, account } = await core.signIn({ ...body, domains })
    ctx.cookies.set(SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: 'lax',
      secure: config.cookieSecure,
      maxAge: config.sessionTtlSeconds * 1000,
      path: '/',
    })
    ok(ctx, { account, csrfToken })
  })
  // The signed-in session of the cookie with its CSRF token, for a page that cannot read the
  // HttpOnly cookie (the operator console). Same origin only: no CORS header lets another site read it.
  router.get('/session', rejectQuery, async (ctx) => {
    const token = ctx.cookies.get(SESSION_COOKIE)
    const session = token ? await core.describeSession({ token }) : undefined
    if (!session) throw new UnauthorizedError('No live Sign-In with Ethereum session: sign in with POST /auth/siwe.')
    ctx.set('Cache-Control', 'no-store')
    ok(ctx, session)
  })
  // The same, for a page that asks before anyone signed in: 200 with `signedIn: false` when there is no live session, never a 401.
  router.get('/session/state', rejectQuery, async (ctx) => {
    const token = ctx.cookies.get(SESSION_COOKIE)
    const session = token ? await core.describeSession({ token }) : undefined
    ctx.set('Cache-Control', 'no-store')
    ok(ctx, session ? { signedIn: true, ...session } : { signedIn: false })
  })
  router.post('/logout', rejectQuery, async (ctx) => {
    parse(noBody, ctx.request.body)
    const token = ctx.cookies.get(SESSION_COOKIE)
    if (token) await core.signOut({ token })
    ctx.cookies.set(SESSION_COOKIE, null, { path: '/' })
    ok(ctx, { ok: true })
  })
  return router
}
