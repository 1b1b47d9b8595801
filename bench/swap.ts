/**
 * Swap benchmark: quote latency under a fixed 200 requests/s (goal p99 ≤ 20 ms) and executed
 * swaps per second across 10 wallets. The real server runs as a child process (embedded anvil,
 * the machine's Postgres or DATABASE_URL); autocannon drives the quotes from this process.
 *
 *   npm run -s bench:swap
 */
import { cpus } from 'node:os'
import autocannon from 'autocannon'
import { withService } from './serviceFixture.ts'

async function main() {
  await withService('swap', async ({ url, apiKey, api }) => {
    const agents: string[] = []
    for (let i = 0; i < 10; i++) {
      const a = await api('POST', '/agents', { name: `swapper-${i}`, model: 'gpt-4o-mini', skills: ['trading'] })
      await api('POST', '/dev/faucet', { agentId: a.body.id, eth: '50', usdc: '50000' })
      agents.push(a.body.id)
    }
    const quoteBody = (agentId: string, tokenIn: string, tokenOut: string, amountIn: string) =>
      JSON.stringify({ agentId, tokenIn, tokenOut, amountIn, slippageBps: 100 })
    const first = await api('POST', '/swap/quote', JSON.parse(quoteBody(agents[0]!, 'ETH', 'USDC', '0.01')))
    if (first.status !== 200) throw new Error(`quote failed: ${JSON.stringify(first.body)}`)

    const quotes = []
    for (const [label, tokenIn, tokenOut, amountIn] of [
      ['ETH->USDC (1 hop)', 'ETH', 'USDC', '0.01'],
      ['TSLAx->ETH (2 hops)', 'TSLAx', 'ETH', '0.5'],
    ] as const) {
      const r = await autocannon({
        url: `${url}/api/v1/swap/quote`,
        method: 'POST',
        connections: 10,
        ...({ overallRate: 200 } as object),
        duration: 10,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        ...({ body: quoteBody(agents[0]!, tokenIn, tokenOut, amountIn) } as object),
      })
      quotes.push({ label, rps: Math.round(r.requests.average), p50Ms: r.latency.p50, p90Ms: r.latency.p90, p99Ms: r.latency.p99, non2xx: r.non2xx })
    }

    // Executed swaps: 10 wallets at once, 5 each, alternating ETH->USDC and USDC->ETH.
    const t0 = performance.now()
    const results = await Promise.all(agents.map(async (agentId) => {
      let ok = 0
      for (let i = 0; i < 5; i++) {
        const [tokenIn, tokenOut, amountIn] = i % 2 === 0 ? ['ETH', 'USDC', '0.01'] : ['USDC', 'ETH', '20']
        const r = await api('POST', '/swap/execute', { agentId, tokenIn, tokenOut, amountIn, slippageBps: 300 })
        if (r.status === 200 && r.body.status === 'confirmed') ok++
      }
      return ok
    }))
    const seconds = (performance.now() - t0) / 1000
    const executed = results.reduce((a, b) => a + b, 0)
    const result = {
      machine: { cores: cpus().length, node: process.version },
      quotesAt200Rps: quotes,
      executed: { wallets: 10, swaps: executed, attempted: 50, seconds: Number(seconds.toFixed(2)), swapsPerSecond: Number((executed / seconds).toFixed(2)) },
      goal: { quoteP99Ms: 20, met: quotes.every((q) => q.p99Ms <= 20) },
    }
    process.stdout.write('\nswap quotes at a fixed 200 requests/s, 10 connections, 10 s each\n')
    for (const q of quotes) process.stdout.write(`  ${q.label.padEnd(22)} p50 ${q.p50Ms} ms  p90 ${q.p90Ms} ms  p99 ${q.p99Ms} ms  (non-2xx ${q.non2xx})\n`)
    process.stdout.write(`  goal p99 <= 20 ms: ${result.goal.met ? 'met' : 'MISSED'}\n`)
    process.stdout.write(`executed swaps, 10 wallets x 5: ${executed}/50 confirmed in ${result.executed.seconds} s = ${result.executed.swapsPerSecond} swaps/s\n`)
    process.stdout.write(`${JSON.stringify(result)}\n`)
  })
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(1)
})
