/**
 * The cost of tracing (docs/operations.md, Traces): two services side by side, each a child
 * process of its own (embedded anvil, a fresh database on the machine's Postgres or
 * DATABASE_URL): one with no OTEL_* variable (tracing off: the SDK is never loaded), one with
 * OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local OTLP/HTTP receiver (http/protobuf, every span
 * exported). Rounds rotate among them so each sees the same machine: per round, reads
 * (GET /agents/:id: authentication, the agent's row, the answer) and executed swaps (the request,
 * the actor's commits, the effect, the transaction's signing and receipt). Medians per operation,
 * off and on, and what the receiver got; the last line is the result as JSON.
 *
 * BENCH_TRACES_BASELINE=<another checkout> adds a third service in the rotation: that tree (with
 * its own node_modules), run as it is, for the cost of the tracing code itself while off (the
 * tree before tracing against this one with tracing off).
 *
 *   npm run -s bench:traces
 */
import { createServer } from 'node:http'
import { cpus } from 'node:os'
import { withService } from './serviceFixture.ts'
import { cpuWindow, median } from './lib.ts'
import type { Api } from '../test/support/app.ts'

const ROUNDS = Number(process.env.BENCH_TRACES_ROUNDS ?? 4)
const READS_PER_ROUND = 300
const SWAPS_PER_ROUND = Number(process.env.BENCH_TRACES_SWAPS ?? 6)

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

/** Latencies, and the service's CPU (its process tree: the service and its anvil) over the reads and over the swaps. */
type Side = { pid: number | undefined; reads: number[]; swaps: number[]; readSeconds: number; readCpuMs: number; swapCpuMs: number }
const newSide = (pid: number | undefined): Side => ({ pid, reads: [], swaps: [], readSeconds: 0, readCpuMs: 0, swapCpuMs: 0 })

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
  let cpu = cpuWindow(side.pid)
  for (let i = 0; i < READS_PER_ROUND; i++) side.reads.push(await ops.read())
  side.readCpuMs += cpu().serverMs
  side.readSeconds += (performance.now() - t0) / 1000
  cpu = cpuWindow(side.pid)
  for (let i = 0; i < SWAPS_PER_ROUND; i++) side.swaps.push(await ops.swap())
  side.swapCpuMs += cpu().serverMs
}

/** The services side by side: each started in turn (the later inside the earlier), then `fn` with all of them. */
type Service = { name: string; env: Record<string, string>; cwd?: string }
type Started = { api: Api; pid: number | undefined }
async function withServices(services: Service[], fn: (started: Started[]) => Promise<void>, started: Started[] = []): Promise<void> {
  const [first, ...rest] = services
  if (!first) return fn(started)
  await withService(first.name, (s) => withServices(rest, fn, [...started, { api: s.api, pid: s.pid }]), first.env, first.cwd ? { cwd: first.cwd } : {})
}

async function main() {
  const collector = await startCollector()
  const baseline = process.env.BENCH_TRACES_BASELINE
  const services: Service[] = [
    // Off whatever OTEL_* the bench itself was started with.
    { name: 'traces_off', env: { OTEL_SDK_DISABLED: 'true' } },
    { name: 'traces_on', env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_SERVICE_NAME: 'bench-traces', OTEL_SDK_DISABLED: 'false' } },
    ...(baseline ? [{ name: 'traces_baseline', env: { OTEL_SDK_DISABLED: 'true' }, cwd: baseline }] : []),
  ]
  try {
    await withServices(services, async (started) => {
      const ops = []
      for (const { api } of started) ops.push(await prepare(api))
      if (collector.got.requests === 0) await new Promise((r) => setTimeout(r, 2500))
      if (collector.got.requests === 0) throw new Error('the traced service sent no spans: is its SDK started?')
      const sides = started.map((s) => newSide(s.pid))
      for (let r = 0; r < ROUNDS; r++) {
        // Rotating which goes first, so none always runs on a warmer machine.
        for (let i = 0; i < sides.length; i++) {
          const k = (r + i) % sides.length
          await round(ops[k]!, sides[k]!)
        }
      }
      const ms = (xs: number[]) => Number(median(xs).toFixed(2))
      const [off, on, before] = sides as [Side, Side, Side | undefined]
      const perSecond = (s: Side) => Math.round(s.reads.length / s.readSeconds)
      // Service CPU per operation: µs per read, ms per swap.
      const readCpuUs = (s: Side) => Math.round((1000 * s.readCpuMs) / s.reads.length)
      const swapCpuMs = (s: Side) => Number((s.swapCpuMs / s.swaps.length).toFixed(1))
      const result = {
        machine: { cores: cpus().length, node: process.version },
        reads: {
          n: off.reads.length,
          p50OffMs: ms(off.reads), p50OnMs: ms(on.reads), addedMs: Number((median(on.reads) - median(off.reads)).toFixed(2)),
          perSecondOff: perSecond(off), perSecondOn: perSecond(on), cpuUsOff: readCpuUs(off), cpuUsOn: readCpuUs(on),
          ...(before ? { p50BaselineMs: ms(before.reads), perSecondBaseline: perSecond(before), cpuUsBaseline: readCpuUs(before) } : {}),
        },
        swaps: {
          n: off.swaps.length, p50OffMs: ms(off.swaps), p50OnMs: ms(on.swaps), addedMs: Number((median(on.swaps) - median(off.swaps)).toFixed(1)),
          cpuMsOff: swapCpuMs(off), cpuMsOn: swapCpuMs(on),
          ...(before ? { p50BaselineMs: ms(before.swaps), cpuMsBaseline: swapCpuMs(before) } : {}),
        },
        exported: { requests: collector.got.requests, bytes: collector.got.bytes },
      }
      process.stdout.write(`reads (GET /agents/:id, ${result.reads.n} each way): p50 ${result.reads.p50OffMs} ms off, ${result.reads.p50OnMs} ms on; ${result.reads.perSecondOff}/s off, ${result.reads.perSecondOn}/s on; service CPU ${result.reads.cpuUsOff} µs off, ${result.reads.cpuUsOn} µs on per read\n`)
      process.stdout.write(`swaps (executed, ${result.swaps.n} each way): p50 ${result.swaps.p50OffMs} ms off, ${result.swaps.p50OnMs} ms on: ${result.swaps.addedMs} ms added; service CPU ${result.swaps.cpuMsOff} ms off, ${result.swaps.cpuMsOn} ms on per swap\n`)
      if (before) process.stdout.write(`baseline tree ${baseline}: reads p50 ${ms(before.reads)} ms, ${perSecond(before)}/s, ${readCpuUs(before)} µs CPU; swaps p50 ${ms(before.swaps)} ms, ${swapCpuMs(before)} ms CPU\n`)
      process.stdout.write(`exported: ${result.exported.requests} OTLP requests, ${result.exported.bytes} bytes\n`)
      process.stdout.write(`${JSON.stringify(result)}\n`)
    })
  } finally {
    await collector.close()
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(1)
})
