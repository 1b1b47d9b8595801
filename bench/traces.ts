/**
 * The cost of tracing (docs/operations.md, Traces): two services side by side, each a child
 * process of its own (embedded anvil, a fresh database on the machine's Postgres or
 * DATABASE_URL): one with no OTEL_* variable (tracing off: the SDK is never loaded), one with
 * OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local OTLP/HTTP receiver (http/protobuf, every span
 * exported). Rounds alternate between them so both see the same machine: per round, reads
 * (GET /agents/:id: authentication, the agent's row, the answer) and executed swaps (the request,
 * the actor's commits, the effect, the transaction's signing and receipt). Medians per operation,
 * off and on, and what the receiver got; the last line is the result as JSON.
 *
 *   npm run -s bench:traces
 */
import { createServer } from 'node:http'
import { cpus } from 'node:os'
import { withService } from './serviceFixture.ts'
import { median } from './lib.ts'
import type { Api } from '../test/support/app.ts'

const ROUNDS = 4
const READS_PER_ROUND = 300
const SWAPS_PER_ROUND = 6

/** A collector's OTLP/HTTP endpoint that counts what it is sent and answers an empty success. */
async function startCollector() {
  const got = { requests: 0, bytes: 0 }
  const server = createServer((req, res) => {
    req.on('data', (c: Buffer) => (got.bytes += c.length))
    req.on('end', () => {
      if (req.url === '/v1/traces') got.requests++
      res.writeHead(200, { 'content-type': String(req.headers['content-type'] ?? 'application/x-protobuf') }).end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}`, got, close: () => new Promise<void>((r) => server.close(() => r())) }
}

type Side = { reads: number[]; swaps: number[]; readSeconds: number }

async function prepare(api: Api) {
  const agent = (await api('POST', '/agents', { name: 'bench', model: 'gpt-4o-mini', skills: ['trading'] })).body
  const faucet = await api('POST', '/dev/faucet', { agentId: agent.id, eth: '50' })
  if (faucet.status !== 200) throw new Error(`faucet: ${JSON.stringify(faucet.body)}`)
  const swap = async () => {
    const t0 = performance.now()
    const r = await api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01', slippageBps: 300 })
    if (r.body.status !== 'confirmed') throw new Error(`swap: ${JSON.stringify(r.body)}`)
    return performance.now() - t0
  }
  const read = async () => {
    const t0 = performance.now()
    const r = await api('GET', `/agents/${agent.id}`)
    if (r.status !== 200) throw new Error(`read: ${r.status}`)
    return performance.now() - t0
  }
  // Warm-up: the modules' first use, the prepared statements.
  await swap()
  for (let i = 0; i < 50; i++) await read()
  return { swap, read }
}

async function round(ops: Awaited<ReturnType<typeof prepare>>, side: Side) {
  const t0 = performance.now()
  for (let i = 0; i < READS_PER_ROUND; i++) side.reads.push(await ops.read())
  side.readSeconds += (performance.now() - t0) / 1000
  for (let i = 0; i < SWAPS_PER_ROUND; i++) side.swaps.push(await ops.swap())
}

async function main() {
  const collector = await startCollector()
  try {
    await withService('traces_off', async (off) => {
      await withService('traces_on', async (on) => {
        const opsOff = await prepare(off.api)
        const opsOn = await prepare(on.api)
        if (collector.got.requests === 0) await new Promise((r) => setTimeout(r, 2500))
        if (collector.got.requests === 0) throw new Error('the traced service sent no spans: is its SDK started?')
        const sides = { off: { reads: [], swaps: [], readSeconds: 0 } as Side, on: { reads: [], swaps: [], readSeconds: 0 } as Side }
        for (let r = 0; r < ROUNDS; r++) {
          // Alternating which goes first, so neither always runs on a warmer machine.
          if (r % 2 === 0) { await round(opsOff, sides.off); await round(opsOn, sides.on) }
          else { await round(opsOn, sides.on); await round(opsOff, sides.off) }
        }
        const ms = (xs: number[]) => Number(median(xs).toFixed(2))
        const result = {
          machine: { cores: cpus().length, node: process.version },
          reads: {
            n: sides.off.reads.length,
            p50OffMs: ms(sides.off.reads), p50OnMs: ms(sides.on.reads), addedMs: Number((median(sides.on.reads) - median(sides.off.reads)).toFixed(2)),
            perSecondOff: Math.round(sides.off.reads.length / sides.off.readSeconds), perSecondOn: Math.round(sides.on.reads.length / sides.on.readSeconds),
          },
          swaps: { n: sides.off.swaps.length, p50OffMs: ms(sides.off.swaps), p50OnMs: ms(sides.on.swaps), addedMs: Number((median(sides.on.swaps) - median(sides.off.swaps)).toFixed(1)) },
          exported: { requests: collector.got.requests, bytes: collector.got.bytes },
        }
        process.stdout.write(`reads (GET /agents/:id, ${result.reads.n} each way): p50 ${result.reads.p50OffMs} ms off, ${result.reads.p50OnMs} ms on; ${result.reads.perSecondOff}/s off, ${result.reads.perSecondOn}/s on\n`)
        process.stdout.write(`swaps (executed, ${result.swaps.n} each way): p50 ${result.swaps.p50OffMs} ms off, ${result.swaps.p50OnMs} ms on: ${result.swaps.addedMs} ms added\n`)
        process.stdout.write(`exported: ${result.exported.requests} OTLP requests, ${result.exported.bytes} bytes\n`)
        process.stdout.write(`${JSON.stringify(result)}\n`)
      }, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_SERVICE_NAME: 'bench-traces', OTEL_SDK_DISABLED: 'false' })
      // Off whatever OTEL_* the bench itself was started with.
    }, { OTEL_SDK_DISABLED: 'true' })
  } finally {
    await collector.close()
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(1)
})
