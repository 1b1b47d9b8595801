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
  it('model provider: finite timeout, no SDK retries, starter credits, catalog path (old name still read)', () => {
    const c = loadConfig({})
    expect(c.modelProvider).toEqual({ baseUrl: undefined, apiKey: undefined, timeoutMs: 60_000, maxRetries: 0 })
    expect(c.starterCredits).toBe(1000)
    expect(c.modelsFile).toBeUndefined()
    expect(loadConfig({ MODELS_FILE: '/old.json' }).modelsFile).toBe('/old.json')
    expect(loadConfig({ MODELS_FILE: '/old.json', MODEL_CATALOG: '/new.json' }).modelsFile).toBe('/new.json')
    expect(loadConfig({ OPENAI_TIMEOUT_SECONDS: '5', OPENAI_MAX_RETRIES: '2', STARTER_CREDITS: '0' })).toMatchObject({
      modelProvider: { timeoutMs: 5000, maxRetries: 2 },
      starterCredits: 0,
    })
    expect(() => loadConfig({ OPENAI_MAX_RETRIES: '-1' })).toThrow(/OPENAI_MAX_RETRIES/)
    expect(() => loadConfig({ STARTER_CREDITS: '1.5' })).toThrow(/STARTER_CREDITS/)
  })
  it('retention: defaults of 30 and 7 days, 7 days of inbox keys, 30 of hook message ids, a quiet run\'s messages compacted; out-of-range values stop the boot naming the setting', () => {
    expect(loadConfig({}).retention).toEqual({ actorMs: 30 * 86_400_000, quietMs: 7 * 86_400_000, liveHistoryMs: 86_400_000, inboxMs: 7 * 86_400_000, hookMessageMs: 30 * 86_400_000, sweepMs: 60_000, keepQuietRunMessages: false })
    expect(loadConfig({ KEEP_QUIET_RUN_MESSAGES: 'true' }).retention.keepQuietRunMessages).toBe(true)
    expect(() => loadConfig({ KEEP_QUIET_RUN_MESSAGES: 'sometimes' })).toThrow(/KEEP_QUIET_RUN_MESSAGES/)
    expect(loadConfig({ ACTOR_RETENTION_MINUTES: '5', ACTOR_RETENTION_QUIET_MINUTES: '0.5', RETENTION_SWEEP_SECONDS: '10' }).retention).toMatchObject({ actorMs: 300_000, quietMs: 30_000, sweepMs: 10_000 })
    for (const name of ['ACTOR_RETENTION_MINUTES', 'ACTOR_RETENTION_QUIET_MINUTES', 'ACTOR_LIVE_HISTORY_HOURS', 'INBOX_RETENTION_HOURS', 'HOOK_MESSAGE_RETENTION_HOURS', 'RETENTION_SWEEP_SECONDS']) {
      for (const bad of ['-1', '0', 'soon', '1e9']) expect(() => loadConfig({ [name]: bad }), `${name}=${bad}`).toThrow(new RegExp(name))
    }
  })
  it('tracing: off with no OTEL_* set; the standard variables as the specification reads them', () => {
    expect(loadConfig({}).tracing).toBeUndefined()
    expect(loadConfig({ OTEL_SERVICE_NAME: 'alts' }).tracing).toEqual({ url: 'http://localhost:4318/v1/traces', protocol: 'http/protobuf', serviceName: 'alts', headers: {} })
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_HEADERS: 'x-key=a%20b,x-tenant=7' }).tracing)
      .toEqual({ url: 'http://collector:4318/v1/traces', protocol: 'http/json', serviceName: 'agent-launch-trading-service', headers: { 'x-key': 'a b', 'x-tenant': '7' } })
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/otlp/traces' }).tracing?.url).toBe('https://b/otlp/traces')
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_SDK_DISABLED: 'true' }).tracing).toBeUndefined()
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/)
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/)
  })
})
