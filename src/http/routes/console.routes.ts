import { readFileSync } from 'node:fs'
import { Router } from '@koa/router'
import type { Context } from 'koa'

/** The console's files, shipped in the package beside this module's folder: no CDN, no build step. */
const ASSETS = {
  'index.html': 'text/html; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  'icon.svg': 'image/svg+xml',
} as const

/**
 * Everything the page may load or call: its own origin only. No inline script or style, no
 * frames (the actions must not be clickjacked), no form posts elsewhere.
 */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/**
 * The operator console at `/ops`: a static page, its module, its style and its icon (also at `/favicon.ico`). It holds no data: it signs in
 * with an operator's key or session and reads the ops API, which answers 401/403 to anyone else.
 *
 * @example
 * app.use(consoleRoutes().routes())
 */
export function consoleRoutes(): Router {
  const files = new Map(
    Object.entries(ASSETS).map(([name, type]) => [name, { type, body: readFileSync(new URL(`../console/${name}`, import.meta.url)) }]),
  )
  const router = new Router()
  const send = (name: keyof typeof ASSETS) => (ctx: Context) => {
    const file = files.get(name)!
    ctx.status = 200
    ctx.set({ 'Content-Type': file.type, 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer', 'Cache-Control': 'no-cache' })
    ctx.body = file.body
  }
  router.get('/ops', send('index.html'))
  router.get('/ops/', send('index.html'))
  router.get('/ops/console.js', send('console.js'))
  router.get('/ops/console.css', send('console.css'))
  // The page links its icon; a browser that asks the origin's /favicon.ico anyway gets the same one.
  router.get('/ops/icon.svg', send('icon.svg'))
  router.get('/favicon.ico', send('icon.svg'))
  return router
}
