/**
 * Webhook benchmark (docs/benchmarks.md, "Webhooks"). The real server runs as a child process
 * (embedded anvil, the machine's Postgres or DATABASE_URL); a local HTTP receiver answers the
 * deliveries. Three figures, in one run:
 *
 * 1. The added cost per event on the trade path: executed swaps timed without any endpoint, then
 *    with an endpoint subscribed to every event (`*`), alternating in rounds, side by side.
 * 2. Throughput: 10,000 account events recorded at once (inserted as the triggers would write
 *    them), delivered to the receiver: deliveries per second until the last one landed.
 * 3. Backlog: the receiver answers 503 for DOWN_SECONDS (45 s here, scaled down from the issue's
 *    5 minutes so the whole run takes about 2 minutes) while events keep coming at 20 a second;
 *    then it is back, and the time until the backlog is drained is measured. Retries are made
 *    short for the run (first after 1 s, at most 5 s apart) so the drain shows the dispatcher,
 *    not the production backoff (5 s doubling to 3 h).
 *
 *   npm run -s bench:webhooks
 */
import { createServer } from 'node:http'
import { cpus } from 'node:os'
import pg from 'pg'
import { withService } from './serviceFixture.ts'
import { median } from './lib.ts'

const EVENTS = 10_000
const DOWN_SECONDS = 45
const BACKLOG_RATE = 20

/** A receiver that counts each delivery id answered 200 once; `down` answers 503. */
async function startReceiver() {
  const delivered = new Set<string>()
  let down = false
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      if (down) {
        res.writeHead(503).end()
        return
      }
      delivered.add(String(req.headers['webhook-id']))
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    delivered,
    setDown: (d: boolean) => void (down = d),
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}

const until = async (ok: () => boolean, timeoutMs: number, what: string) => {
  const end = Date.now() + timeoutMs
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

async function main() {
  await withService('webhooks', async ({ api, databaseUrl }) => {
    const db = new pg.Pool({ connectionString: databaseUrl, max: 4 })
    const receiver = await startReceiver()
    try {
      const agent = (await api('POST', '/agents', { name: 'bench', model: 'gpt-4o-mini', skills: ['trading'] })).body
      await api('POST', '/dev/faucet', { agentId: agent.id, eth: '50', usdc: '50000' })
      const swap = async () => {
        const t0 = performance.now()
        const r = await api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', slippageBps: 300 })
        if (r.body.status !== 'confirmed') throw new Error(`swap: ${JSON.stringify(r.body)}`)
        return performance.now() - t0
      }
      await swap()

      // 1. The trade path, without and with an endpoint subscribed to everything, alternating.
      const without: number[] = []
      const withHook: number[] = []
      let hookId: string | undefined
      for (let round = 0; round < 3; round++) {
        if (hookId) await api('DELETE', `/webhooks/${hookId}`)
        hookId = undefined
        for (let i = 0; i < 8; i++) without.push(await swap())
        const hook = await api('POST', '/webhooks', { url: receiver.url, events: ['*'] })
        if (hook.status !== 201) throw new Error(`webhook: ${JSON.stringify(hook.body)}`)
        hookId = hook.body.id
        for (let i = 0; i < 8; i++) withHook.push(await swap())
      }
      const ms = (xs: number[]) => Number(median(xs).toFixed(1))
      const tradePath = { swaps: without.length, p50WithoutMs: ms(without), p50WithEndpointMs: ms(withHook), addedMs: Number((median(withHook) - median(without)).toFixed(1)) }

      // 2. Throughput: 10,000 events at once.
      const { rows } = await db.query<{ account_id: string }>('select account_id from webhook_endpoint where id = $1', [hookId])
      const accountId = rows[0]!.account_id
      const insert = (n: number, tag: string) =>
        db.query(
          `insert into account_event (id, account_id, type, resource_kind, resource_id, data)
           select 'evt_bench_' || $3 || '_' || g, $1, 'agent.paused', 'agent', $4, jsonb_build_object('id', $4::text, 'bench', g)
             from generate_series(1, $2) g`,
          [accountId, n, tag, agent.id],
        )
      const base = receiver.delivered.size
      const t0 = performance.now()
      await insert(EVENTS, 'burst')
      await until(() => receiver.delivered.size - base >= EVENTS, 600_000, `${EVENTS} deliveries`)
      const seconds = (performance.now() - t0) / 1000
      const throughput = { events: EVENTS, seconds: Number(seconds.toFixed(1)), deliveriesPerSecond: Math.round(EVENTS / seconds) }

      // 3. Backlog: the receiver down while events keep coming, then back.
      receiver.setDown(true)
      const before = receiver.delivered.size
      let sent = 0
      const downUntil = Date.now() + DOWN_SECONDS * 1000
      while (Date.now() < downUntil) {
        await insert(BACKLOG_RATE, `down${sent}`)
        sent += BACKLOG_RATE
        await new Promise((r) => setTimeout(r, 1000))
      }
      receiver.setDown(false)
      const t1 = performance.now()
      await until(() => receiver.delivered.size - before >= sent, 600_000, `a backlog of ${sent}`)
      const backlog = { downSeconds: DOWN_SECONDS, events: sent, drainedSeconds: Number(((performance.now() - t1) / 1000).toFixed(1)) }

      const result = { machine: { cores: cpus().length, node: process.version }, tradePath, throughput, backlog }
      process.stdout.write(`\ntrade path (executed swaps, ${tradePath.swaps} each way, alternating rounds): p50 ${tradePath.p50WithoutMs} ms without an endpoint, ${tradePath.p50WithEndpointMs} ms with one subscribed to *: ${tradePath.addedMs} ms added\n`)
      process.stdout.write(`throughput: ${EVENTS} events delivered in ${throughput.seconds} s = ${throughput.deliveriesPerSecond} deliveries/s\n`)
      process.stdout.write(`backlog: receiver down ${DOWN_SECONDS} s (scaled from 5 min) at ${BACKLOG_RATE} events/s = ${sent} events, drained ${backlog.drainedSeconds} s after it came back\n`)
      process.stdout.write(`${JSON.stringify(result)}\n`)
    } finally {
      await receiver.close()
      await db.end()
    }
  }, { WEBHOOK_POLL_MS: '50', WEBHOOK_RETRY_BASE_SECONDS: '1', WEBHOOK_RETRY_MAX_SECONDS: '5' })
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(1)
})
