import { describe, expect, it } from 'vitest'
import { loadConfig } from './config.ts'

describe('config', () => {
  it('has defaults that run with nothing set', () => {
    const c = loadConfig({})
    expect(c).toMatchObject({ port: 3000, host: '127.0.0.1', whitelistHoldSeconds: 0, chain: { embedded: true } })
  })
  it('holds whitelist entries 24 h on a real chain unless told otherwise', () => {
    expect(loadConfig({ CHAIN_RPC_URL: 'http://node:8545' }).whitelistHoldSeconds).toBe(86_400)
    expect(loadConfig({ CHAIN_RPC_URL: 'http://node:8545', WHITELIST_HOLD_SECONDS: '60' }).whitelistHoldSeconds).toBe(60)
  })
  it('treats an empty variable as unset, never as zero', () => {
    const c = loadConfig({ PORT: '', WHITELIST_HOLD_SECONDS: ' ', CHAIN_RPC_URL: 'http://node:8545', FAULT_INJECT: '', DEPLOYER_PRIVATE_KEY: '' })
    expect(c.port).toBe(3000)
    expect(c.whitelistHoldSeconds).toBe(86_400)
    expect(c.faultInject).toBeUndefined()
  })
  it('refuses bad values with the variable named', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/)
    expect(() => loadConfig({ FAULT_INJECT: 'sometimes' })).toThrow(/FAULT_INJECT/)
  })
})
