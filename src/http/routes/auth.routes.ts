import { Router } from '@koa/router'
import { z } from 'zod'
import type { AppDeps } from '../appDeps.ts'
import { ok } from '../respond.ts'
import { parse, rejectQuery } from '../validate.ts'
import { SESSION_COOKIE } from '../middleware/auth.ts'
import { accountView } from '../../domain/accounts/accounts.service.ts'

export const siweBody = z.strictObject({
  message: z.string().min(1).max(4000),
  signature: z.string().regex(/^0x[0-9a-fA-F]+$/, 'A 0x-prefixed hex signature.').transform((s) => s as `0x${string}`),
})

/** Sign-In with Ethereum for the dashboard: nonce, sign-in (session cookie + CSRF token), logout. */
export function authRoutes(deps: AppDeps): Router {
  const router = new Router({ prefix: '/auth' })
  router.get('/nonce', rejectQuery, async (ctx) => {
    ok(ctx, await deps.sessions.issueNonce())
  })
  router.post('/siwe', rejectQuery, async (ctx) => {
    const body = parse(siweBody, ctx.request.body)
    // Never the request's Host header: a phishing site could forward a victim's signature.
    const domains = deps.config.siweDomain ? [deps.config.siweDomain] : [`127.0.0.1:${deps.config.port}`, `localhost:${deps.config.port}`]
    const { token, csrfToken, account } = await deps.sessions.signIn({ ...body, domains })
    ctx.cookies.set(SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: 'lax',
      secure: deps.config.cookieSecure,
      maxAge: deps.config.sessionTtlSeconds * 1000,
      path: '/',
    })
    ok(ctx, { account: accountView(account), csrfToken })
  })
  router.post('/logout', rejectQuery, async (ctx) => {
    const token = ctx.cookies.get(SESSION_COOKIE)
    if (token) await deps.sessions.signOut(token)
    ctx.cookies.set(SESSION_COOKIE, null, { path: '/' })
    ok(ctx, { ok: true })
  })
  return router
}
