import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { erc20Abi, parseEther, parseUnits, toHex, type Address, type Hex, type WalletClient } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { apiClient, startTestApp, type Api, type TestApp } from './support/app.ts'
import { createTestDatabase } from './support/db.ts'
import { waitFor } from './support/waitFor.ts'
import { EMBEDDED_DEPLOYER_KEY, walletClientFor, type ChainHandle } from '../src/adapters/chain/chain.ts'
import { MockUSDCArtifact } from '../src/dev/artifacts/index.ts'
import { decryptPrivateKey, loadOrCreateMasterKey } from '../src/adapters/chain/keystore.ts'
import { createPriceReader } from '../src/adapters/chain/priceReader.ts'

const CONFIRMATIONS = 3
let database: { url: string; drop(): Promise<void> }
let dataDir: string
let app: TestApp
let chain: ChainHandle
let alice: { accountId: string; apiKey: string; api: Api }
let bob: { accountId: string; apiKey: string; api: Api }
let outsider: WalletClient
let aliceAddress: Address

const env = () => ({ DATABASE_URL: database.url, DATA_DIR: dataDir, DEPOSIT_CONFIRMATIONS: String(CONFIRMATIONS) })
const rpc = (method: string, params: unknown[] = []) => chain.publicClient.request({ method: method as never, params: params as never })
const mine = (n: number) => rpc('anvil_mine', [toHex(n)])
const sync = () => app.services.indexer!.syncOnce()
const credits = async (api: Api) => (await api('GET', '/billing')).body.credits as number
const deposits = async (api: Api) =>
  (await api('GET', '/billing/transactions?kind=deposit&limit=100')).body.transactions as Array<{ credits: number; ref: string; kind: string }>
const pending = async (api: Api) => (await api('GET', '/billing/deposit')).body.pending as Array<{ txHash: string; asset: string; amount: string; confirmations: number }>

async function mined(hash: Hex) {
  const r = await chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  expect(r.status).toBe('success')
  return r
}
const sendUsdc = async (to: Address, amount: string) =>
  mined(await outsider.writeContract({ chain: chain.chain, account: outsider.account!, address: chain.manifest.contracts.usdc, abi: erc20Abi, functionName: 'transfer', args: [to, parseUnits(amount, 6)] }))
const sendEth = async (to: Address, amount: string) =>
  mined(await outsider.sendTransaction({ chain: chain.chain, account: outsider.account!, to, value: parseEther(amount) }))

beforeAll(async () => {
  database = await createTestDatabase()
  dataDir = mkdtempSync(join(tmpdir(), 'alts-deposits-'))
  app = await startTestApp(env(), { withChain: true })
  chain = app.services.chain!
  alice = await app.account({ name: 'alice' })
  bob = await app.account({ name: 'bob' })
  const key = generatePrivateKey()
  outsider = walletClientFor(chain, key)
  const address = privateKeyToAccount(key).address
  await rpc('anvil_setBalance', [address, toHex(parseEther('100'))])
  const deployer = walletClientFor(chain, EMBEDDED_DEPLOYER_KEY)
  await mined(await deployer.writeContract({ address: chain.manifest.contracts.usdc, abi: MockUSDCArtifact.abi, functionName: 'mint', args: [address, parseUnits('1000', 6)] }))
})
afterAll(async () => {
  await app?.close()
  await database?.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('GET /billing/deposit', () => {
  it("gives each account one address (two first calls at once agree), the assets, rate and confirmations; its key is encrypted", async () => {
    const [a, b] = await Promise.all([alice.api('GET', '/billing/deposit'), alice.api('GET', '/billing/deposit')])
    expect(a.status).toBe(200)
    expect(a.body).toEqual({
      address: expect.stringMatching(/^0x[0-9a-f]{40}$/),
      chainId: 31337,
      assets: [
        { symbol: 'ETH', address: null, decimals: 18 },
        { symbol: 'USDC', address: chain.manifest.contracts.usdc.toLowerCase(), decimals: 6 },
      ],
      creditsPerUsd: 1000,
      rate: { USDC: expect.any(String), ETH: expect.any(String), rounding: expect.any(String) },
      confirmations: CONFIRMATIONS,
      pending: [],
      meta: expect.any(Object),
    })
    expect(b.body.address).toBe(a.body.address)
    aliceAddress = a.body.address
    const other = await bob.api('GET', '/billing/deposit')
    expect(other.body.address).not.toBe(aliceAddress)

    const { rows } = await app.services.pool.query<{ account_id: string; key_encrypted: string }>('select account_id, key_encrypted from deposit_address where address = $1', [aliceAddress])
    expect(rows).toHaveLength(1)
    expect(rows[0]!.account_id).toBe(alice.accountId)
    const masterKey = await loadOrCreateMasterKey({ dataDir, logger: { warn() {} } })
    const privateKey = decryptPrivateKey({ masterKey, agentId: `deposit:${alice.accountId}`, encrypted: rows[0]!.key_encrypted })
    expect(privateKeyToAccount(privateKey).address.toLowerCase()).toBe(aliceAddress)
    expect(() => decryptPrivateKey({ masterKey, agentId: alice.accountId, encrypted: rows[0]!.key_encrypted })).toThrow()
  })
})

describe('deposits are credited once, after the confirmations', () => {
  it('USDC: pending until the confirmations, then 1 credit per 0.001 USD, once', async () => {
    const before = await credits(alice.api)
    const r = await sendUsdc(aliceAddress, '10')
    await sync()
    expect(await pending(alice.api)).toEqual([{ asset: 'USDC', amount: '10', txHash: r.transactionHash, logIndex: expect.any(Number), blockNumber: Number(r.blockNumber), confirmations: 1 }])
    await mine(CONFIRMATIONS - 2)
    await sync()
    expect(await credits(alice.api)).toBe(before)
    expect(await deposits(alice.api)).toEqual([])
    await mine(1)
    await waitFor(async () => (await credits(alice.api)) === before + 10_000)
    const entries = await deposits(alice.api)
    const log = (await chain.publicClient.getTransactionReceipt({ hash: r.transactionHash })).logs[0]!
    expect(entries).toEqual([expect.objectContaining({ kind: 'deposit', credits: 10_000, ref: `31337:${r.transactionHash}:${log.logIndex}` })])
    expect(await pending(alice.api)).toEqual([])
    await mine(2)
    await sync()
    expect(await credits(alice.api)).toBe(before + 10_000)
  })

  it("ETH: a plain transfer is credited at the WETH/USDC pool's price at its block", async () => {
    const before = await credits(alice.api)
    const r = await sendEth(aliceAddress, '0.01')
    const eth = await (await createPriceReader(chain, r.blockNumber)).quote('ETH')
    const expected = Number((parseEther('0.01') * eth!.usd18 * 1000n) / 10n ** 36n)
    expect(expected).toBe(30_000) // the seeded pool: 1 ETH = 3,000 USDC
    await sync()
    expect((await pending(alice.api)).map((p) => [p.asset, p.amount, p.txHash])).toEqual([['ETH', '0.01', r.transactionHash]])
    await mine(CONFIRMATIONS - 1)
    await waitFor(async () => (await credits(alice.api)) === before + expected)
    expect((await deposits(alice.api)).filter((e) => e.ref === `31337:${r.transactionHash}:-1`)).toEqual([expect.objectContaining({ credits: expected })])
  })

  it('a reorg that removes a deposit before its confirmations credits nothing', async () => {
    const before = await credits(alice.api)
    const snapshot = await rpc('evm_snapshot')
    const r = await sendUsdc(aliceAddress, '5')
    await sync()
    expect((await pending(alice.api)).map((p) => p.txHash)).toEqual([r.transactionHash])
    await rpc('evm_revert', [snapshot])
    await mine(CONFIRMATIONS + 2)
    await sync()
    await waitFor(async () => (await pending(alice.api)).length === 0)
    await expect(chain.publicClient.getTransactionReceipt({ hash: r.transactionHash })).rejects.toThrow()
    expect(await credits(alice.api)).toBe(before)
    expect((await deposits(alice.api)).filter((e) => e.ref.includes(r.transactionHash))).toEqual([])
    const { rows } = await app.services.pool.query('select 1 from deposit where tx_hash = $1', [r.transactionHash])
    expect(rows).toEqual([])
  })
})

describe('dev faucet to the account deposit address', () => {
  it('sends real transfers that the indexer credits; agentId or accountDeposit, not both', async () => {
    const before = await credits(bob.api)
    const res = await bob.api('POST', '/dev/faucet', { accountDeposit: true, usdc: '10', eth: '0.01' })
    expect(res.status).toBe(200)
    const address = (await bob.api('GET', '/billing/deposit')).body.address
    expect(res.body).toMatchObject({ accountDeposit: true, address, transactions: [{ asset: 'ETH', amount: '0.01' }, { asset: 'USDC', amount: '10' }] })
    // The faucet mines the blocks its deposits need: credited with no further transaction.
    await waitFor(async () => (await deposits(bob.api)).length === 2)
    const entries = await deposits(bob.api)
    expect(entries.map((e) => e.credits).sort((x, y) => x - y)).toEqual([10_000, 30_000])
    expect(await credits(bob.api)).toBe(before + 40_000)
    for (const body of [{ usdc: '1' }, { accountDeposit: true, agentId: '00000000-0000-4000-8000-000000000000', usdc: '1' }]) {
      const bad = await bob.api('POST', '/dev/faucet', body)
      expect(bad.status).toBe(422)
      expect(bad.body.field_errors).toEqual({ agentId: expect.any(String) })
    }
  })
})

describe('a restart', () => {
  it('on the same database and chain credits nothing again, and keeps the address', async () => {
    const aliceCredits = await credits(alice.api)
    const aliceEntries = await deposits(alice.api)
    const bobCredits = await credits(bob.api)
    expect(aliceEntries).toHaveLength(2)
    await app.close()
    app = await startTestApp(env(), { withChain: true })
    chain = app.services.chain!
    alice = { ...alice, api: apiClient(`${app.url}/api/v1`, alice.apiKey) }
    bob = { ...bob, api: apiClient(`${app.url}/api/v1`, bob.apiKey) }
    await sync()
    await mine(CONFIRMATIONS + 1)
    await sync()
    expect(await credits(alice.api)).toBe(aliceCredits)
    expect(await deposits(alice.api)).toEqual(aliceEntries)
    expect(await credits(bob.api)).toBe(bobCredits)
    expect((await alice.api('GET', '/billing/deposit')).body.address).toBe(aliceAddress)
    const { rows } = await app.services.pool.query<{ n: number }>(`select count(*)::int as n from credit_entry where kind = 'deposit'`)
    expect(rows[0]!.n).toBe(4)
  })
})
