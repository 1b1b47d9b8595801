/**
 * Tool-call overhead: `get_agent` through the tool server's Streamable HTTP endpoint (/api/mcp),
 * its plain JSON face (/api/mcp/call) and the REST route (GET /api/v1/agents/:id), side by side
 * in one run against the real server in a child process. Closed loop, one request in flight,
 * the ways interleaved in rounds so that drift on a shared machine hits each alike.
 *
 *   npm run -s bench:mcp
 */
import { cpus } from 'node:os'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { percentile, round } from './lib.ts'
import { withService } from './serviceFixture.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10)
const PER_ROUND = Number(process.env.BENCH_PER_ROUND ?? 100)
const WARMUP = 50

type Way = { label: string; call: () => Promise<void> }

async function main() {
  await withService('mcp', async ({ url, apiKey, api }) => {
    const agent = await api('POST', '/agents', { name: 'bench-mcp', skills: ['trading'] })
    const agentId = agent.body.id as string
    const auth = { authorization: `Bearer ${apiKey}` }
    const expectOk = async (res: Response, what: string) => {
      const text = await res.text()
      if (res.status !== 200 || text.includes('"isError":true')) throw new Error(`${what}: ${res.status} ${text.slice(0, 200)}`)
    }
    const rpc = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_agent', arguments: { agent_id: agentId } } })
    const v1 = new ClientV1({ name: 'bench-v1', version: '1' })
    await v1.connect(new TransportV1(new URL(`${url}/api/mcp`), { requestInit: { headers: auth } }))
    const v2 = new ClientV2({ name: 'bench-v2', version: '2' })
    await v2.connect(new TransportV2(new URL(`${url}/api/mcp`), { requestInit: { headers: auth } }))
    const modern = new ClientV2({ name: 'bench-v2-modern', version: '2' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
    await modern.connect(new TransportV2(new URL(`${url}/api/mcp`), { requestInit: { headers: auth } }))

    const ways: Way[] = [
      { label: 'REST GET /api/v1/agents/:id', call: async () => expectOk(await fetch(`${url}/api/v1/agents/${agentId}`, { headers: auth }), 'rest') },
      {
        label: 'POST /api/mcp/call',
        call: async () => expectOk(await fetch(`${url}/api/mcp/call`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'get_agent', arguments: { agent_id: agentId } }) }), 'call'),
      },
      {
        label: '/api/mcp raw JSON-RPC (2025 era)',
        call: async () =>
          expectOk(await fetch(`${url}/api/mcp`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: rpc }), 'rpc'),
      },
      {
        label: '/api/mcp v1 SDK client',
        call: async () => {
          const r = await v1.callTool({ name: 'get_agent', arguments: { agent_id: agentId } })
          if (r.isError) throw new Error('v1 call failed')
        },
      },
      {
        label: '/api/mcp v2 SDK client (2025)',
        call: async () => {
          const r = await v2.callTool({ name: 'get_agent', arguments: { agent_id: agentId } })
          if (r.isError) throw new Error('v2 call failed')
        },
      },
      {
        label: '/api/mcp v2 SDK client (2026-07-28)',
        call: async () => {
          const r = await modern.callTool({ name: 'get_agent', arguments: { agent_id: agentId } })
          if (r.isError) throw new Error('v2 modern call failed')
        },
      },
    ]
    for (const w of ways) for (let i = 0; i < WARMUP; i++) await w.call()
    const samples = new Map<string, number[]>(ways.map((w) => [w.label, []]))
    for (let r = 0; r < ROUNDS; r++) {
      for (const w of ways) {
        const out = samples.get(w.label)!
        for (let i = 0; i < PER_ROUND; i++) {
          const t0 = performance.now()
          await w.call()
          out.push(performance.now() - t0)
        }
      }
    }
    await v1.close()
    await v2.close()
    await modern.close()

    const rows = ways.map((w) => {
      const sorted = samples.get(w.label)!.sort((a, b) => a - b)
      return { label: w.label, n: sorted.length, p50Ms: round(percentile(sorted, 50), 3), p99Ms: round(percentile(sorted, 99), 3) }
    })
    const rest = rows[0]!
    process.stdout.write(`\nget_agent, one request in flight, ${ROUNDS} interleaved rounds x ${PER_ROUND} calls per way (${cpus().length} cores, node ${process.version})\n`)
    for (const r of rows) {
      process.stdout.write(
        `  ${r.label.padEnd(38)} p50 ${r.p50Ms.toFixed(3).padStart(7)} ms  p99 ${r.p99Ms.toFixed(3).padStart(7)} ms  ` +
          `x${round(r.p50Ms / rest.p50Ms).toFixed(2)} p50, x${round(r.p99Ms / rest.p99Ms).toFixed(2)} p99 vs REST\n`,
      )
    }
    process.stdout.write(`${JSON.stringify({ machine: { cores: cpus().length, node: process.version }, rows })}\n`)
  })
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(1)
})
