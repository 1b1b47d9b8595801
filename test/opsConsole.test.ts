import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { context, propagation, trace } from '@opentelemetry/api'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { createSiweMessage } from 'viem/siwe'
import { apiClient, startTestApp, waitForLaunchEnd, type TestApp } from './support/app.ts'
import { waitFor } from './support/waitFor.ts'

/** Debian's chromium (CI installs it: .ci/run); the test never downloads a browser. */
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => existsSync(p))
if (!CHROMIUM) console.warn('test/opsConsole.test.ts skipped: no Chromium at /usr/bin/chromium (apt-get install -y chromium)')
/** A folder for a screenshot of each view, for a reviewer: OPS_CONSOLE_SCREENSHOTS=/tmp/ops-shots; none is taken without it. */
const SHOTS = process.env.OPS_CONSOLE_SCREENSHOTS
/** Tracing on in this process, exporting nowhere: the runtime stores each transition's trace, the timeline shows it. */
const tracing = new NodeTracerProvider()

let app: TestApp
let browser: BrowserContext
let page: Page
let profile: string
let op: Awaited<ReturnType<TestApp['account']>>
let alice: Awaited<ReturnType<TestApp['account']>>
let agentId: string
const key = () => `k-${Math.random().toString(36).slice(2)}`
const shot = async (name: string) => {
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
}

/**
 * What the browser logged that a reader of the page would take for a fault: console errors, page
 * errors, failed requests and answers of 400 or more. A request the page or the test cancelled
 * itself (net::ERR_ABORTED: a view's stream closed when the view changed, a navigation) is not one.
 */
let problems: string[] = []
function watchProblems(p: Page): void {
  p.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`) })
  p.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  p.on('requestfailed', (r) => { if (r.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`) })
  p.on('response', (r) => { if (r.status() >= 400) problems.push(`${r.status()}: ${r.request().method()} ${r.url()}`) })
}

/** Opens /ops (not signed in: the sign-in page), signs in with the key; answers the status the ops API gave it. */
async function signIn(apiKey: string): Promise<number> {
  await page.goto(`${app.url}/ops`)
  await page.getByTestId('api-key').fill(apiKey)
  const answer = page.waitForResponse((r) => r.url().endsWith('/api/v1/ops/overview'))
  await page.getByTestId('signin').click()
  return (await answer).status()
}

describe.skipIf(!CHROMIUM)('the operator console in headless Chromium', () => {
  beforeAll(async () => {
    if (SHOTS) mkdirSync(SHOTS, { recursive: true })
    tracing.register()
    // An hour's hold: an owner's loosening is seen pending on the card.
    app = await startTestApp({ SIWE_DOMAIN: 'app.test', WHITELIST_HOLD_SECONDS: '3600' }, { withChain: true })
    op = await app.account({ operator: true, name: 'ops' })
    alice = await app.account({ name: 'alice' })
    agentId = (await alice.api('POST', '/agents', { name: 'watched', skills: ['trading', 'token-launch'] })).body.id
    expect((await alice.api('POST', '/dev/faucet', { agentId, eth: '20', usdc: '20000' })).status).toBe(200)
    profile = mkdtempSync(join(tmpdir(), 'ops-console-chromium-'))
    // A fresh profile each run (Playwright passes it as --user-data-dir).
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1400, height: 900 },
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
    page = browser.pages()[0] ?? (await browser.newPage())
    watchProblems(page)
  }, 120_000)
  beforeEach(() => {
    problems = []
  })
  afterAll(async () => {
    await browser?.close()
    await app?.close()
    if (profile) rmSync(profile, { recursive: true, force: true })
    // The rest of this worker's files run with tracing off, as the service does without OTEL_*.
    await tracing.shutdown()
    trace.disable()
    context.disable()
    propagation.disable()
  })

  it('signed out, the sign-in page shows no error and the browser logs none: the session is asked without a 401, the icon is served', async () => {
    const icon = page.waitForResponse((r) => r.url().endsWith('/ops/icon.svg'))
    const state = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/session/state'))
    await page.goto(`${app.url}/ops`)
    await page.getByTestId('api-key').waitFor()
    expect([(await state).status(), await (await state).json()]).toEqual([200, expect.objectContaining({ signedIn: false })])
    expect((await icon).status()).toBe(200)
    expect(await page.getByTestId('signin-error').count()).toBe(0)
    expect(await page.locator('#nav').isHidden()).toBe(true)
    const favicon = await page.request.get(`${app.url}/favicon.ico`)
    expect([favicon.status(), favicon.headers()['content-type']]).toEqual([200, 'image/svg+xml'])
    expect(problems).toEqual([])
    await shot('0-signed-out')
  })

  it('a non-operator key is refused: the sign-in page says so and the API answered 403', async () => {
    expect(await signIn(alice.apiKey)).toBe(403)
    await expect.poll(() => page.getByTestId('signin-error').textContent()).toContain('not an operator')
    expect(await page.locator('#nav').isHidden()).toBe(true)
    // The refusal is the one thing logged: the answer and the browser's line for it.
    expect(problems.length).toBeGreaterThan(0)
    expect(problems.filter((p) => !/403/.test(p))).toEqual([])
    await shot('0-refused')
  })

  it('an operator signs in and sees the overview; a launch goes to live on the page without a reload', async () => {
    expect(await signIn(op.apiKey)).toBe(200)
    await page.getByTestId('kind-agent').waitFor()
    // Every kind has a row, automations included (none in this account yet), and the firings card is there.
    expect(await page.getByTestId('kind-automation').textContent()).toContain('none')
    expect(await page.getByTestId('firings').textContent()).toContain('automation firings / min')
    // The storage: the database's size (in bytes as a person reads them), its growth, the compaction's backlog.
    expect(await page.getByTestId('database-size').textContent()).toMatch(/\d+(\.\d)? (B|KB|MB|GB)database size/)
    expect(await page.getByTestId('compaction-backlog').textContent()).toMatch(/^\d+compaction backlog$/)
    await shot('1-overview')

    await page.goto(`${app.url}/ops#/actors?kind=launch`)
    await page.getByTestId('actor-list').waitFor()
    const loads: string[] = []
    page.on('load', () => loads.push(page.url()))
    const res = await alice.api('POST', '/launch/venue-a', { agentId, symbol: 'LIVE', name: 'Live Cat', quote: 'ETH' }, { 'idempotency-key': key() })
    expect(res.status).toBe(202)
    const row = page.locator(`[data-testid=actor-row][data-id="${res.body.id}"]`)
    await row.locator('.badge', { hasText: 'live' }).waitFor({ timeout: 20_000 })
    expect(loads).toEqual([])
    await shot('2-launch-live')

    // The launch's own page follows its event stream.
    await row.getByRole('link', { name: res.body.id }).click()
    await expect.poll(() => page.getByTestId('actor-status').textContent()).toBe('live')
    expect(await page.getByTestId('timeline-event').count()).toBe(5)
    expect(problems).toEqual([])
  })

  it("opens a wallet operation's timeline with its transactions", async () => {
    const swap = await alice.api('POST', '/swap/execute', { agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1', slippageBps: 100 })
    expect(swap.body.status).toBe('confirmed')
    await page.getByTestId('search').fill(swap.body.txHash)
    await page.getByTestId('search').press('Enter')
    await page.locator(`[data-testid=actor-row][data-id="${swap.body.id}"]`).getByRole('link', { name: swap.body.id }).click()
    await expect.poll(() => page.getByTestId('actor-status').textContent()).toBe('confirmed')
    expect(await page.getByTestId('transactions').textContent()).toContain(swap.body.txHash)
    expect(await page.getByTestId('timeline-effect').count()).toBeGreaterThanOrEqual(2)
    expect(await page.getByTestId('timeline').textContent()).toContain('op.submit')
    // Each effect says its attempts against its limit; the mined transaction its fee.
    expect(await page.getByTestId('timeline').textContent()).toMatch(/op\.submit\s*done after 1 attempt of 8/)
    expect(await page.getByTestId('tx-fee').last().textContent()).toMatch(/^\d+\.\d{9} ETH$/)
    // The timeline names the swap's trace (the answer's traceparent): on each transition and effect, and once at the top.
    const traceId = swap.headers.get('traceparent')!.split('-')[1]!
    expect(await page.getByTestId('actor-traces').textContent()).toBe(`traces: ${traceId}`)
    const tags = await page.getByTestId('trace-id').allTextContents()
    expect(tags.length).toBe((await page.getByTestId('timeline-event').count()) + (await page.getByTestId('timeline-effect').count()))
    expect(new Set(tags)).toEqual(new Set([`trace ${traceId}`]))
    await shot('3-walletop-timeline')

    await page.goto(`${app.url}/ops#/agent/${agentId}`)
    await expect.poll(() => page.getByTestId('portfolio-total').textContent()).toMatch(/^\d+\.\d+$/)
    await page.getByTestId('value-chart').locator('svg polyline').waitFor()
    // The chart has its axes with values: USD on one, blocks on the other.
    expect((await page.getByTestId('chart-y-label').allTextContents()).every((t) => /^\$\d+\.\d\d$/.test(t))).toBe(true)
    expect(await page.getByTestId('chart-x-label').first().textContent()).toMatch(/^block \d+$/)
    expect(await page.getByTestId('value-chart').locator('.axis-title').allTextContents()).toEqual(['value (USD)', 'block (time →)'])
    expect(await page.getByTestId('pending-changes').textContent()).toContain('None.')
    // Its operations, newest first: the swap (amounts as a person reads them, its tx hash), then the launch.
    const swapRow = page.locator(`[data-testid=operation-row][data-id="${swap.body.id}"]`)
    await swapRow.waitFor()
    expect(await swapRow.getByTestId('operation-amounts').textContent()).toMatch(/^0\.1 ETH → \d+(\.\d+)? USDC$/)
    expect(await swapRow.locator('td[title]').getAttribute('title')).toBe(swap.body.txHash)
    expect(await swapRow.getByTestId('operation-started-by').textContent()).toBe('owner request')
    expect(await page.getByTestId('operation-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-kind')))).toEqual(['swap', 'launch'])
    await shot('4-agent-card')
    // Each leads to its timeline.
    await swapRow.getByRole('link', { name: /…/ }).click()
    await expect.poll(() => page.getByTestId('actor-status').textContent()).toBe('confirmed')
    expect(page.url()).toContain(`#/actor/${swap.body.id}`)
    await page.goBack()
    await page.getByTestId('pause-agent').waitFor()

    // The kill switch from the card, with a reason: audited, and the agent can no longer trade.
    await page.getByTestId('pause-agent').click()
    await page.getByTestId('reason').fill('suspicious volume')
    await page.getByTestId('confirm').click()
    await page.getByTestId('audit-row').filter({ hasText: 'suspicious volume' }).waitFor()
    expect(await page.getByTestId('audit-table').textContent()).toContain('ops.agent.pause')
    await shot('4b-agent-paused')
    const refused = await alice.api('POST', '/swap/execute', { agentId, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.1', slippageBps: 100 })
    expect(refused.body.code).toBe('policy_violation')
    // The owner's unpause waits for its hold: the card shows it as a row, not as JSON.
    expect((await alice.api('PATCH', `/agents/${agentId}`, { policy: { paused: false } })).body.pendingChanges).toHaveLength(1)
    const pending = page.getByTestId('pending-change').filter({ hasText: 'paused' })
    await pending.waitFor()
    expect(await pending.locator('td').allTextContents()).toEqual(['paused', 'false', expect.any(String)])

    // The agent's timeline links to what it did, with what started each.
    await page.goto(`${app.url}/ops#/actor/${agentId}`)
    const did = page.locator(`[data-testid=naming-agent-row][data-id="${swap.body.id}"]`)
    await did.waitFor()
    expect(await page.getByTestId('naming-agent-row').count()).toBe(2)
    await did.getByRole('link').first().click()
    await expect.poll(() => page.getByTestId('actor-status').textContent()).toBe('confirmed')
    expect(problems).toEqual([])
  })

  it('filters to failed with one click', async () => {
    // A launch that fails in its actor: begun for a wallet with no ETH, the simulation refuses it.
    const poor = (await alice.api('POST', '/agents', { name: 'poor', skills: ['token-launch'] })).body.id
    const { rows } = await app.services.pool.query(`select snapshot->'context' as ctx from actor where kind = 'launch' limit 1`)
    const { gas, txHash, tokenAddress, poolAddress, blockNumber, error, ...input } = rows[0].ctx
    void [gas, txHash, tokenAddress, poolAddress, blockNumber, error]
    const failedId = randomUUID()
    await app.services.runtime.create('launch', { id: failedId, accountId: alice.accountId, input: { ...input, launchId: failedId, agentId: poor, symbol: 'POOR' } })
    await app.services.runtime.send(failedId, { type: 'launch.begin' })
    expect((await waitForLaunchEnd(alice.api, failedId)).status).toBe('failed')

    await page.goto(`${app.url}/ops#/actors`)
    await page.locator(`[data-testid=actor-row][data-id="${failedId}"]`).waitFor()
    expect(await page.getByTestId('actor-row').count()).toBeGreaterThan(1)
    await page.getByTestId('failed-only').click()
    await page.waitForURL(/failed=true/)
    await expect.poll(() => page.getByTestId('actor-row').evaluateAll((rows) => rows.map((r) => `${r.getAttribute('data-id')}:${r.getAttribute('data-status')}`)))
      .toEqual([`${failedId}:failed`])
    await shot('5-failed-only')
    expect(problems).toEqual([])
  })

  it('retries a dead letter with a reason and shows the audit row', async () => {
    const id = randomUUID()
    await app.services.runtime.create('agent', { id, accountId: alice.accountId, input: { agentId: id, accountId: alice.accountId } })
    // An event an older build refused (dead-lettered, the actor marked stuck), valid for this one.
    const { rows } = await app.services.pool.query(
      `insert into actor_inbox (actor_id, account_id, event, processed_at, dead_at, error)
       values ($1, $2, '{"type":"agent.start"}', now(), now(), 'validation failed (older build)') returning seq`,
      [id, alice.accountId],
    )
    const seq = Number(rows[0].seq)
    await app.services.pool.query(`update actor set stuck_reason = 'dead letter ' || $2 || ': validation failed', stuck_at = now() where id = $1`, [id, seq])

    await page.goto(`${app.url}/ops#/dead-letters`)
    const row = page.locator(`[data-testid=dead-letter-row][data-seq="${seq}"]`)
    // The event a retry would send is named in the list and in the confirmation.
    expect(await row.getByTestId('dead-letter-type').textContent()).toBe('agent.start')
    await row.getByTestId('retry').click()
    expect(await row.getByTestId('confirm').textContent()).toBe('Confirm: send agent.start again')
    expect(await row.getByTestId('confirm-note').textContent()).toContain(`Sends agent.start to agent ${id} again`)
    await row.getByTestId('reason').fill('accepted since the parser fix')
    await shot('6-dead-letter-retry')
    await row.getByTestId('confirm').click()
    await page.getByTestId('audit-row').filter({ hasText: 'accepted since the parser fix' }).waitFor()
    expect(await page.getByTestId('audit-table').textContent()).toContain('ops.deadletter.retry')
    await shot('7-audit-row')
    await waitFor(async () => (await op.api('GET', `/ops/actors/${id}`)).body.status === 'running')
    const audit = await op.api('GET', `/ops/audit?subjectId=${id}`)
    expect(audit.body.entries[0]).toMatchObject({ action: 'ops.deadletter.retry', actor: { type: 'operator', accountId: op.accountId }, after: { reason: 'accepted since the parser fix' } })
    expect(problems).toEqual([])
  })

  it('an actor with more than 100 journal entries: the newest 100, then "Load older" adds the rest', async () => {
    const id = randomUUID()
    await app.services.runtime.create('agent', { id, accountId: alice.accountId, input: { agentId: id, accountId: alice.accountId } })
    for (let i = 0; i < 60; i++) {
      await app.services.runtime.send(id, { type: 'agent.start' })
      await app.services.runtime.send(id, { type: 'agent.stop' })
    }
    await page.goto(`${app.url}/ops#/actor/${id}`)
    await expect.poll(() => page.getByTestId('timeline-event').count()).toBe(100)
    await page.getByTestId('load-older').click()
    await expect.poll(() => page.getByTestId('timeline-event').count()).toBe(121)
    await page.getByTestId('timeline-start').waitFor()
    expect(await page.getByTestId('timeline-event').first().textContent()).toContain('xstate.init')
    await shot('8-timeline-older')
    expect(problems).toEqual([])
  })

  it('an operator signed in with Sign-In with Ethereum (the session cookie alone) acts from the page; signing out ends the session', async () => {
    // A wallet signs in (as a dashboard would) and its account is made an operator.
    const pub = apiClient(`${app.url}/api/v1`)
    const signer = privateKeyToAccount(generatePrivateKey())
    const { nonce } = (await pub('GET', '/auth/nonce')).body
    const message = createSiweMessage({ address: signer.address, chainId: 31337, domain: 'app.test', nonce, uri: 'https://app.test', version: '1' })
    const signedIn = await pub('POST', '/auth/siwe', { message, signature: await signer.signMessage({ message }) })
    expect(signedIn.status).toBe(200)
    const operatorId = signedIn.body.account.id as string
    await app.services.pool.query('update account set is_operator = true where id = $1', [operatorId])
    const sid = /sid=([^;]+)/.exec(signedIn.headers.get('set-cookie') ?? '')![1]!
    const target = (await alice.api('POST', '/agents', { name: 'siwe-watched', skills: ['trading'] })).body.id as string

    // No key in this tab: only the browser's cookie (the page never saw the sign-in answer nor its CSRF token).
    await page.evaluate(() => sessionStorage.clear())
    await browser.addCookies([{ name: 'sid', value: sid, url: app.url, httpOnly: true, sameSite: 'Lax' }])
    await page.goto('about:blank')
    const session = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/session/state'))
    await page.goto(`${app.url}/ops#/agent/${target}`)
    expect((await session).status()).toBe(200)
    expect(await (await session).json()).toMatchObject({ signedIn: true, isOperator: true, accountId: operatorId })
    await page.getByTestId('pause-agent').click()
    await page.getByTestId('reason').fill('paused from a wallet session')
    await page.getByTestId('confirm').click()
    await page.getByTestId('audit-row').filter({ hasText: 'paused from a wallet session' }).waitFor()
    expect(await page.locator('#nav').isHidden()).toBe(false)
    await shot('8-siwe-session-action')
    const audit = await op.api('GET', `/ops/audit?subjectId=${target}`)
    expect(audit.body.entries[0]).toMatchObject({ action: 'ops.agent.pause', actor: { type: 'operator', accountId: operatorId, via: 'session', address: signer.address.toLowerCase() } })

    // Sign out ends the session itself: the cookie no longer signs in.
    await page.locator('#signout').click()
    await page.getByTestId('api-key').waitFor()
    expect(await page.getByTestId('signin-error').count()).toBe(0)
    await waitFor(async () => (await pub('GET', '/auth/session', undefined, { cookie: `sid=${sid}` })).status === 401)
    expect(problems).toEqual([])
  })
})
