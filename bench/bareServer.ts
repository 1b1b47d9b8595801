/**
 * The HTTP baseline: a bare Koa app with one route, `GET /ping` -> small JSON. Run as a child
 * process by bench/run.ts (PORT from the environment).
 */
import Koa from 'koa'

const app = new Koa()
app.use(async (ctx) => {
  if (ctx.method === 'GET' && ctx.path === '/ping') ctx.body = { ok: true, at: Date.now() }
})
const server = app.listen(Number(process.env.PORT), '127.0.0.1')
server.on('listening', () => process.stdout.write('listening\n'))
process.on('SIGTERM', () => {
  server.close()
  server.closeAllConnections()
  process.exit(0)
})
