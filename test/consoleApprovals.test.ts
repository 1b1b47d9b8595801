import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { startTestApp, type TestApp } from './support/app.ts'

/** Debian's chromium (CI installs it: .ci/run); the test never downloads a browser. */
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => existsSync(p))
if (!CHROMIUM) console.warn('test/consoleApprovals.test.ts skipped: no Chromium at /usr/bin/chromium (apt-get install -y chromium)')

/**
 * The console's Approvals view in headless Chromium: the signed-in (operator) account's own
 * pending approvals, approved and rejected with the buttons (the API's routes, with a reason);
 * another account's approval is not shown. Real server, real anvil.
 */
let app: TestApp
let browser: BrowserContext
let page: Page
let profile: string
let op: Awaited<ReturnType<TestApp['account']>>
let alice: Awaited<ReturnType<TestApp['account']>>
const problems: string[] = []
const policy = { max_trade_usd: '10000', max_daily_usd: '100000', require_approval_above_usd: '1000' }

/** A swap of about 2,100 USD by a new agent of `who`, waiting for approval: its id. */
async function waitingSwap(who: Awaited<ReturnType<TestApp['account']>>): Promise<string> {
  const agent = (await who.api('POST', '/agents', { name: 'careful', model: 'gpt-4o-mini', skills: [], policy })).body
  expect((await who.api('POST', '/dev/faucet', { agentId: agent.id, eth: '5', usdc: '0' })).status).toBe(200)
  const swap = await who.api('POST', '/swap/execute', { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.7', slippageBps: 100 })
  expect(swap.body.status, JSON.stringify(swap.body)).toBe('awaiting_approval')
  return swap.body.id
}

describe.skipIf(!CHROMIUM)('approvals in the console', () => {
  let first: string
  let second: string
  let others: string
  beforeAll(async () => {
    app = await startTestApp({}, { withChain: true })
    op = await app.account({ operator: true, name: 'ops' })
    alice = await app.account({ name: 'alice' })
    first = await waitingSwap(op)
    second = await waitingSwap(op)
    others = await waitingSwap(alice)
    profile = mkdtempSync(join(tmpdir(), 'console-approvals-chromium-'))
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1400, height: 900 },
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
    page = browser.pages()[0] ?? (await browser.newPage())
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
    page.on('response', (r) => { if (r.status() >= 400) problems.push(`${r.status()}: ${r.request().method()} ${r.url()}`) })
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await app?.close()
    if (profile) rmSync(profile, { recursive: true, force: true })
  })

  it("lists the account's pending approvals (not another account's); Approve sends one, Reject fails the other", async () => {
    await page.goto(`${app.url}/ops`)
    await page.getByTestId('api-key').fill(op.apiKey)
    await page.getByTestId('signin').click()
    await page.getByTestId('kind-agent').waitFor()
    await page.goto(`${app.url}/ops#/approvals`)
    await page.getByTestId('approvals-table').waitFor()
    await expect.poll(() => page.getByTestId('approval-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')).sort())).toEqual([first, second].sort())
    expect(await page.getByTestId('approvals-note').textContent()).toContain('Other accounts')
    expect(await page.locator(`[data-id="${others}"]`).count()).toBe(0)
    expect(await page.locator(`[data-id="${first}"]`).getByTestId('approval-what').textContent()).toBe('0.7 ETH → USDC')

    const row = page.locator(`[data-id="${first}"]`)
    await row.getByTestId('approve').click()
    expect(await row.getByTestId('confirm-note').textContent()).toContain('Sends 0.7 ETH → USDC')
    await row.getByTestId('reason').fill('checked by ops')
    await row.getByTestId('confirm').click()
    await expect.poll(async () => (await op.api('GET', `/approvals/${first}`)).body).toMatchObject({ status: 'approved', reason: 'checked by ops', decidedBy: expect.stringMatching(/^key:/) })
    await expect.poll(async () => (await op.api('GET', `/swap/${first}`)).body.status, { timeout: 20_000 }).toBe('confirmed')
    // Decided, it leaves the pending list.
    await expect.poll(() => page.getByTestId('approval-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')))).toEqual([second])

    const other = page.locator(`[data-id="${second}"]`)
    await other.getByTestId('reject').click()
    await other.getByTestId('reason').fill('too large')
    await other.getByTestId('confirm').click()
    await expect.poll(async () => (await op.api('GET', `/approvals/${second}`)).body).toMatchObject({ status: 'rejected', reason: 'too large', operation: { status: 'failed', error: { code: 'approval_rejected' } } })
    await page.getByTestId('approvals-table').filter({ hasText: 'No pending approvals.' }).waitFor()

    await page.goto(`${app.url}/ops#/approvals?status=rejected`)
    await page.locator(`[data-id="${second}"]`).getByTestId('approval-status').filter({ hasText: 'rejected' }).waitFor()
    expect((await alice.api('GET', `/approvals/${others}`)).body.status).toBe('pending')
    expect(problems).toEqual([])
  }, 90_000)
})
