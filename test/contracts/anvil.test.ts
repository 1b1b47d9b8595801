import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPublicClient, http, parseEther } from 'viem'
import { mnemonicToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilArgs, startAnvil } from '../../src/dev/anvil.ts'
import { WETH9Artifact } from '../../src/dev/artifacts/index.ts'
import { createChainClients } from '../../src/dev/deploy.ts'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'anvil-test-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('startAnvil', () => {
  it('builds loopback-only arguments with the cache path and the snapshot to load; anvil never writes state itself', () => {
    expect(anvilArgs({ cachePath: '/d/cache', statePath: '/d/state.json', loadState: '/d/state.json', blockTime: 2, chainId: 8453 })).toEqual([
      '--host', '127.0.0.1', '--port', '0', '--chain-id', '8453', '--cache-path', '/d/cache',
      '--load-state', '/d/state.json', '--block-time', '2',
    ])
    expect(anvilArgs({ cachePath: '/d/cache', statePath: '/d/state.json' })).not.toContain('--state')
  })

  it('keeps a loadable snapshot on disk at every moment, and a SIGKILL of anvil loses at most the last interval', async () => {
    const statePath = join(dir, 'snap', 'anvil.json')
    const cachePath = join(dir, 'cache-snap')
    const first = await startAnvil({ cachePath, statePath, stateIntervalMs: 20 })
    const client = createPublicClient({ transport: http(first.rpcUrl) })
    // Read the file over and over while blocks are mined and snapshots replace it: every read parses.
    let reads = 0
    for (let i = 0; i < 40; i++) {
      await client.request({ method: 'anvil_mine' as never, params: ['0x1'] as never })
      if (existsSync(statePath)) {
        JSON.parse(await readFile(statePath, 'utf8'))
        reads++
      }
      await new Promise((r) => setTimeout(r, 5))
    }
    expect(reads).toBeGreaterThan(20)
    // A change without a block is saved once it is announced.
    const rich = '0x00000000000000000000000000000000000000aa'
    await client.request({ method: 'anvil_setBalance' as never, params: [rich, '0x1234'] as never })
    first.stateChanged()
    const saved = await client.getBlockNumber({ cacheTime: 0 })
    await new Promise((r) => setTimeout(r, 200))
    first.process.kill('SIGKILL')
    await new Promise((r) => first.process.once('exit', r))
    await first.stop()

    const second = await startAnvil({ cachePath, statePath })
    try {
      const again = createPublicClient({ transport: http(second.rpcUrl) })
      expect(await again.getBlockNumber()).toBe(saved)
      expect(await again.getBalance({ address: rich })).toBe(0x1234n)
    } finally {
      await second.stop()
    }
  })

  it('refuses a damaged state file with a message that says what to do', async () => {
    const statePath = join(dir, 'damaged', 'anvil.json')
    await mkdir(join(dir, 'damaged'), { recursive: true })
    await writeFile(statePath, '{"block":{"number":"0x5"')
    await expect(startAnvil({ cachePath: join(dir, 'cache-damaged'), statePath })).rejects.toThrow(/is damaged .*Move it away/s)
  })

  it('keeps the chain across a restart with the same state file', async () => {
    const statePath = join(dir, 'state', 'anvil.json')
    const cachePath = join(dir, 'cache')
    const account = mnemonicToAccount('test test test test test test test test test test test junk')

    const first = await startAnvil({ cachePath, statePath, chainId: 4242 })
    expect(first.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const { walletClient, publicClient } = createChainClients({ rpcUrl: first.rpcUrl, account, chainId: 4242 })
    expect(await publicClient.getChainId()).toBe(4242)
    const hash = await walletClient.deployContract({ ...WETH9Artifact })
    const weth = (await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 25 })).contractAddress!
    const deposit = await walletClient.writeContract({ address: weth, abi: WETH9Artifact.abi, functionName: 'deposit', value: parseEther('3') })
    await publicClient.waitForTransactionReceipt({ hash: deposit, pollingInterval: 25 })
    // cacheTime 0: viem otherwise answers from the block number it polled while waiting above.
    const block = await publicClient.getBlockNumber({ cacheTime: 0 })
    await first.stop()
    await first.stop() // idempotent
    expect(first.process.exitCode !== null || first.process.signalCode !== null).toBe(true)
    expect((await stat(statePath)).size).toBeGreaterThan(0)

    const second = await startAnvil({ cachePath, statePath, chainId: 4242 })
    try {
      const client = createPublicClient({ transport: http(second.rpcUrl) })
      expect(await client.getBlockNumber()).toBe(block)
      expect(await client.readContract({ address: weth, abi: WETH9Artifact.abi, functionName: 'balanceOf', args: [account.address] })).toBe(
        parseEther('3'),
      )
    } finally {
      await second.stop()
    }
  })

  it('fails fast with the command and output when anvil cannot start', async () => {
    await expect(startAnvil({ cachePath: join(dir, 'c2'), extraArgs: ['--no-such-flag'] })).rejects.toThrow(/anvil exited before listening/)
    await expect(startAnvil({ cachePath: join(dir, 'c3'), anvilBin: join(dir, 'missing-anvil') })).rejects.toThrow(/cannot run anvil/)
  })
})
