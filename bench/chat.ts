/**
 * Chat-turn overhead: a one-round chat turn through the service (`POST /agents/:id/chat`, the
 * scripted model server answering at once) side by side with a direct `openai` SDK call to the
 * same server, in one run, at 1 and at 50 concurrent chats (goal: the service adds at most 5 ms
 * at p50 and keeps its p99 under 25 ms at 50 concurrent chats). The service runs as a child
 * process; the scripted server and both clients run here.
 *
 *   npm run -s bench:chat        (BENCH_CHAT_REQUESTS: requests per measurement, default 400)
 */
import { cpus } from 'node:os'
import { LLMock } from '@copilotkit/aimock'
import OpenAI from 'openai'
import { withService } from './serviceFixture.ts'

const REQUESTS = Number(process.env.BENCH_CHAT_REQUESTS ?? 400)

type Stats = { p50: number; p99: number; mean: number; n: number }
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
const stats = (ms: number[]): Stats => {
  const s = [...ms].sort((a, b) => a - b)
  return { p50: round(pct(s, 50)), p99: round(pct(s, 99)), mean: round(s.reduce((a, b) => a + b, 0) / s.length), n: s.length }
}
const round = (n: number) => Math.round(n * 100) / 100

/** Runs `total` calls with `concurrency` in flight; returns each call's latency in ms. */
async function measure(concurrency: number, total: number, call: () => Promise<void>): Promise<number[]> {
  const out: number[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) {
        const t0 = performance.now()
        await call()
        out.push(performance.now() - t0)
      }
    }),
  )
  return out
}

async function main() {
  const mock = new LLMock({ port: 0, host: '127.0.0.1', logLevel: 'silent' })
  mock.on({ endpoint: 'chat', predicate: () => true }, () => ({ content: 'Noted.', usage: { prompt_tokens: 200, completion_tokens: 3 } }))
  const mockUrl = `${await mock.start()}/v1`
  const sdk = new OpenAI({ baseURL: mockUrl, apiKey: 'bench', maxRetries: 0, timeout: 60_000 })
  const env = { OPENAI_BASE_URL: mockUrl, OPENAI_API_KEY: 'bench', STARTER_CREDITS: '100000000', RATE_LIMIT_PER_IP: '100000000' }
  try {
    await withService('chat', async ({ url, apiKey, api }) => {
      const agent = (await api('POST', '/agents', { name: 'bench-chat', skills: [] })).body.id as string
      const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }
      const viaService = async () => {
        const res = await fetch(`${url}/api/v1/agents/${agent}/chat`, { method: 'POST', headers, body: JSON.stringify({ message: 'hello' }) })
        if (res.status !== 200) throw new Error(`chat answered ${res.status}: ${await res.text()}`)
        await res.arrayBuffer()
      }
      const direct = async () => {
        await sdk.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'You are an agent.' }, { role: 'user', content: 'hello' }], max_tokens: 1024 })
      }
      const probe = await api('POST', `/agents/${agent}/chat`, { message: 'hello' })
      if (probe.status !== 200) throw new Error(`chat answered ${probe.status}: ${JSON.stringify(probe.body)}`)
      process.stderr.write('warming up\n')
      // Warm both paths (connections, JIT, prepared statements).
      await measure(10, 100, viaService)
      await measure(10, 100, direct)
      const rows = []
      for (const concurrency of [1, 50]) {
        process.stderr.write(`measuring at ${concurrency} concurrent\n`)
        const total = concurrency === 1 ? Math.min(REQUESTS, 200) : REQUESTS
        // ABBA: each side measured twice, around the other, so drift hits both alike.
        const d1 = await measure(concurrency, total / 2, direct)
        const s1 = await measure(concurrency, total / 2, viaService)
        const s2 = await measure(concurrency, total / 2, viaService)
        const d2 = await measure(concurrency, total / 2, direct)
        const d = stats([...d1, ...d2])
        const s = stats([...s1, ...s2])
        rows.push({ concurrency, direct: d, service: s, addedP50Ms: round(s.p50 - d.p50), addedP99Ms: round(s.p99 - d.p99) })
      }
      const at50 = rows.find((r) => r.concurrency === 50)!
      const result = {
        machine: { cores: cpus().length, node: process.version },
        rows,
        goal: { addedP50Ms: 5, serviceP99MsAt50: 25, met: rows.every((r) => r.addedP50Ms <= 5) && at50.service.p99 <= 25 },
      }
      process.stdout.write('\none-round chat turn via the service vs a direct SDK call to the same scripted server\n')
      for (const r of rows) {
        process.stdout.write(
          `  ${String(r.concurrency).padStart(2)} concurrent: direct p50 ${r.direct.p50} ms p99 ${r.direct.p99} ms | service p50 ${r.service.p50} ms p99 ${r.service.p99} ms | added p50 ${r.addedP50Ms} ms (n=${r.service.n})\n`,
        )
      }
      process.stdout.write(`  goal (added p50 <= 5 ms, service p99 <= 25 ms at 50): ${result.goal.met ? 'met' : 'MISSED'}\n`)
      process.stdout.write(`${JSON.stringify(result)}\n`)
    }, env)
  } finally {
    await mock.stop()
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(1)
})
