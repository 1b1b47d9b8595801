import { timingSafeEqual } from 'node:crypto'
import type { Context, Middleware } from 'koa'
import type { Core } from '../../app/coreApi.ts'
import type { Principal, Scope } from '../../domain/accounts/scopes.ts'
import { ForbiddenError, UnauthorizedError } from '../../domain/errors.ts'

export const SESSION_COOKIE = 'sid'
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

const sameToken = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/**
 * Resolves the caller from `Authorization: Bearer cpk_...` or the session cookie. Writes made
 * with a cookie must carry the session's CSRF token in `X-CSRF-Token`.
 */
export function authenticate(core: Pick<Core, 'authenticateKey' | 'resolveSession'>): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization')
    let principal: Principal | undefined
    if (header) {
      principal = await keyPrincipal(core, header)
    } else {
      const token = ctx.cookies.get(SESSION_COOKIE)
      if (token) principal = await core.resolveSession({ token })
      if (!principal) throw new UnauthorizedError('Send "Authorization: Bearer cpk_..." or sign in.')
      if (!SAFE_METHODS.has(ctx.method)) {
        const csrf = ctx.get('X-CSRF-Token')
        if (!csrf || !principal.csrfToken || !sameToken(csrf, principal.csrfToken)) {
          throw new ForbiddenError('Writes with a session cookie need the X-CSRF-Token header.', 'csrf_token_invalid')
        }
      }
    }
    ctx.state.principal = principal
    await next()
  }
}

/**
 * The principal of an `Authorization: Bearer cpk_...` header; 401 when it is malformed or names
 * no live key (unknown, expired or deleted: a deletion is seen at once).
 */
export async function keyPrincipal(core: Pick<Core, 'authenticateKey'>, header: string): Promise<Principal> {
  const match = /^Bearer\s+(\S+)$/i.exec(header)
  if (!match?.[1]) throw new UnauthorizedError('Authorization must be "Bearer cpk_...".')
  const principal = await core.authenticateKey({ value: match[1] })
  if (!principal) throw new UnauthorizedError('Invalid, expired or deleted API key.')
  return principal
}

export function principalOf(ctx: Context): Principal {
  const p = ctx.state.principal as Principal | undefined
  if (!p) throw new UnauthorizedError()
  return p
}

/** Refuses a key that lacks the scope (403 forbidden). */
export function requireScope(scope: Scope): Middleware {
  return async (ctx, next) => {
    const p = principalOf(ctx)
    if (!p.scopes.includes(scope)) throw new ForbiddenError(`This key lacks the "${scope}" scope.`)
    await next()
  }
}

/** Operator-only routes: any other account gets 403. */
export function requireOperator(): Middleware {
  return async (ctx, next) => {
    if (!principalOf(ctx).isOperator) throw new ForbiddenError('Operator accounts only.')
    await next()
  }
}
