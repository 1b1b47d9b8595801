import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createPublicClient, http, parseEther, toHex, type PublicClient } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { openDatabase, type Database } from '../src/adapters/db/orm.ts'
import { createLogger } from '../src/logger.ts'
import type { ChainHandle } from '../src/adapters/chain/chain.ts'
import { startEmbeddedChain } from '../src/dev/embeddedChain.ts'
import { createTxSender } from '../src/adapters/chain/txSender.ts'
import { createTestDatabase } from './support/db.ts'

const logger = createLogger({ level: 'silent' })
let db: Database
let chain: ChainHandle
let dropDb: () => Promise<void>
let dir: string

beforeAll(async () => {
  const t = await createTestDatabase()
  dropDb = t.drop
  db = await openDatabase({ url: t.url, poolSize: 5, logger })
  dir = mkdtempSync(join(tmpdir(), 'txsender-'))
  chain = await startEmbeddedChain({ dataDir: dir, logger })
})
afterAll(async () => {
  await chain?.stop()
  await db?.close()
  await dropDb?.()
  rmSync(dir, { recursive: true, force: true })
})

async function fundedAccount() {
  const account = privateKeyToAccount(generatePrivateKey())
  await chain.publicClient.request({ method: 'anvil_setBalance' as never, params: [account.address, toHex(parseEther('1'))] as never })
  return account
}

const req = (id: string, account: ReturnType<typeof privateKeyToAccount>) => ({
  id, accountId: '00000000-0000-4000-8000-000000000001', agentId: null, effectId: null, account,
})
const to = '0x000000000000000000000000000000000000bEEF' as const

describe('the wallet transaction outbox', () => {
  it('replaces a transaction not mined in time with a fee bump of at least 10%, then confirms one of them', async () => {
    const account = await fundedAccount()
    const sender = createTxSender({ pool: db.pool, chain, logger, confirmTimeoutMs: 700 })
    await chain.publicClient.request({ method: 'evm_setAutomine' as never, params: [false] as never })
    try {
      const [sent] = await sender.send(req('stuck-1', account), () => [{ kind: 'transfer', to, value: 1n }])
      // Mining resumes only after the first confirmation wait has timed out and a replacement went out.
      setTimeout(() => void chain.publicClient.request({ method: 'evm_setAutomine' as never, params: [true] as never }), 1500)
      const receipt = await sender.confirm(sent!.id, account)
      expect(receipt.status).toBe('success')
      const { rows } = await db.pool.query(
        `select id, nonce, status, max_fee_per_gas::text as fee, max_priority_fee_per_gas::text as tip, replaced_by
           from chain_tx where request_id = 'stuck-1' order by created_at`,
      )
      expect(rows.length).toBeGreaterThanOrEqual(2)
      expect(new Set(rows.map((r) => r.nonce)).size).toBe(1)
      for (let i = 1; i < rows.length; i++) {
        expect(BigInt(rows[i].fee) * 10n).toBeGreaterThanOrEqual(BigInt(rows[i - 1].fee) * 11n)
        expect(BigInt(rows[i].tip) * 10n).toBeGreaterThanOrEqual(BigInt(rows[i - 1].tip) * 11n)
      }
      const confirmed = rows.filter((r) => r.status === 'confirmed')
      expect(confirmed).toHaveLength(1)
      expect(rows.filter((r) => r.status !== 'confirmed').every((r) => r.status === 'replaced' && r.replaced_by === confirmed[0].id)).toBe(true)
      expect(await chain.publicClient.getTransactionCount({ address: account.address })).toBe(1)
    } finally {
      await chain.publicClient.request({ method: 'evm_setAutomine' as never, params: [true] as never })
    }
  })

  it('a send that would revert or cannot pay takes no nonce', async () => {
    const account = await fundedAccount()
    const sender = createTxSender({ pool: db.pool, chain, logger })
    await expect(sender.send(req('too-much', account), () => [{ kind: 'transfer', to, value: parseEther('5') }])).rejects.toMatchObject({ code: 'insufficient_funds' })
    const usdc = chain.manifest.contracts.usdc
    // transfer(to, 1) from a wallet with no USDC reverts in simulation.
    const data = `0xa9059cbb${to.slice(2).toLowerCase().padStart(64, '0')}${'1'.padStart(64, '0')}` as const
    await expect(sender.send(req('reverts', account), () => [{ kind: 'transfer', to: usdc, data }])).rejects.toMatchObject({ code: 'simulation_reverted' })
    const [ok] = await sender.send(req('fine', account), () => [{ kind: 'transfer', to, value: 1n }])
    expect(ok!.nonce).toBe(0)
    // The same request id again: the stored bytes, not a second transaction.
    const [again] = await sender.send(req('fine', account), () => [{ kind: 'transfer', to, value: 1n }])
    expect(again!.hash).toBe(ok!.hash)
    await sender.confirm(ok!.id, account)
    expect(await chain.publicClient.getTransactionCount({ address: account.address })).toBe(1)
  })

  it('after the chain came back behind, sends confirmed transactions it lost again, so the next nonce has no gap', async () => {
    const account = await fundedAccount()
    const sender = createTxSender({ pool: db.pool, chain, logger })
    const rpc = (method: string, params: unknown[] = []) => chain.publicClient.request({ method: method as never, params: params as never })
    const before = (await rpc('evm_snapshot')) as string
    const [first] = await sender.send(req('lost-1', account), () => [{ kind: 'transfer', to, value: 7n }])
    await sender.confirm(first!.id, account)
    // What a restore from a snapshot one second old looks like: the block with our transaction is gone.
    await rpc('evm_revert', [before])
    expect(await chain.publicClient.getTransactionCount({ address: account.address })).toBe(0)

    expect(await sender.rebroadcastPending()).toBeGreaterThanOrEqual(1)
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: first!.hash })
    expect(receipt.status).toBe('success')
    const { rows } = await db.pool.query(`select status, block_number::text as block, block_hash from chain_tx where id = $1`, [first!.id])
    expect(rows[0]).toEqual({ status: 'confirmed', block: receipt.blockNumber.toString(), block_hash: receipt.blockHash })

    const [second] = await sender.send(req('lost-2', account), () => [{ kind: 'transfer', to, value: 1n }])
    expect(second!.nonce).toBe(1)
    expect((await sender.confirm(second!.id, account)).status).toBe('success')
    expect(await chain.publicClient.getTransactionCount({ address: account.address })).toBe(2)
  })

  it('a broadcast that fails after signing keeps the stored transaction: send still answers, confirm sends the same bytes', async () => {
    // A real JSON-RPC hop in front of anvil that refuses eth_sendRawTransaction while `refusing`
    // is set: what a node outage right after the commit looks like from here.
    let refusing = true
    const proxy: Server = createServer((req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', async () => {
        if (refusing && body.includes('eth_sendRawTransaction')) {
          res.writeHead(503).end('node unavailable')
          return
        }
        const upstream = await fetch(chain.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text())
      })
    })
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r))
    try {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
      const publicClient = createPublicClient({ chain: chain.chain, transport: http(url, { retryCount: 0 }) }) as PublicClient
      const sender = createTxSender({ pool: db.pool, chain: { ...chain, publicClient }, logger, confirmTimeoutMs: 500 })
      const account = await fundedAccount()
      const [sent] = await sender.send(req('outage-1', account), () => [{ kind: 'transfer', to, value: 3n }])
      expect(sent!.nonce).toBe(0)
      const stored = await db.pool.query(`select status, hash from chain_tx where request_id = 'outage-1'`)
      expect(stored.rows).toEqual([{ status: 'queued', hash: sent!.hash }])
      expect(await chain.publicClient.getTransactionCount({ address: account.address })).toBe(0)
      // The same request again (an effect retried): the same stored transaction, nothing signed anew.
      const [again] = await sender.send(req('outage-1', account), () => [{ kind: 'transfer', to, value: 3n }])
      expect(again!.hash).toBe(sent!.hash)
      refusing = false
      const receipt = await sender.confirm(sent!.id, account)
      expect(receipt.status).toBe('success')
      expect(receipt.transactionHash).toBe(sent!.hash)
      expect(await chain.publicClient.getTransactionCount({ address: account.address })).toBe(1)
      const after = await db.pool.query(`select status from chain_tx where request_id = 'outage-1'`)
      expect(after.rows).toEqual([{ status: 'confirmed' }])
    } finally {
      await new Promise((r) => proxy.close(r))
    }
  })
})
