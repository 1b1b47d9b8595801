/**
 * Programmatic launcher for an embedded anvil (Foundry's local EVM node), bound to 127.0.0.1.
 * Options are passed explicitly; nothing here reads the environment.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import { gunzip } from 'node:zlib'
import { writeFileAtomic } from '../domain/util/atomicFile.ts'

/** The logger methods used here; a pino Logger fits. */
export interface ChainLogger {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

export interface StartAnvilOptions {
  /** Directory for anvil's RPC cache (otherwise it writes to ~/.foundry). Required; put it under the caller's data dir. */
  cachePath: string
  /**
   * Chain state file: loaded at start if it exists; while running, replaced atomically by a fresh
   * snapshot every `stateIntervalMs` when the chain moved, and once more on `stop()`.
   */
  statePath?: string
  /** How often to check whether a new snapshot is due; default 1000 ms. Only used with `statePath`. */
  stateIntervalMs?: number
  /** TCP port on 127.0.0.1; default: a free port picked by the OS. */
  port?: number
  /** Default 31337. */
  chainId?: number
  /** Seconds between blocks; default: automine (one block per transaction). */
  blockTime?: number
  /** anvil binary; default: the `@foundry-rs/anvil-linux-amd64` package, else `anvil` on PATH. */
  anvilBin?: string
  /** Extra command-line arguments appended as is. */
  extraArgs?: string[]
  /** How long to wait for the RPC to answer; default 20 s. */
  startTimeoutMs?: number
  /** How long `stop()` waits after SIGTERM before SIGKILL; default 10 s. */
  stopTimeoutMs?: number
  logger?: ChainLogger
}

export interface AnvilInstance {
  /** e.g. `http://127.0.0.1:34567` */
  rpcUrl: string
  port: number
  process: ChildProcess
  /** Saves a last snapshot (with `statePath`), then SIGTERM, then SIGKILL after the stop timeout. Idempotent. */
  stop(): Promise<void>
  /** Takes a snapshot now (with `statePath`); resolves once it is on disk. */
  saveState(): Promise<void>
  /** Says the state changed without a new block (e.g. `anvil_setBalance`): the next interval takes a snapshot. */
  stateChanged(): void
}

const LISTENING_RE = /Listening on 127\.0\.0\.1:(\d+)/
const OUTPUT_TAIL_LINES = 40

/**
 * Finds the anvil binary: `explicit` if given, else the installed `@foundry-rs/anvil-linux-amd64`
 * package, else `anvil` (resolved through PATH by spawn).
 *
 * @example
 * resolveAnvilBinary() // '/…/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil'
 */
export function resolveAnvilBinary(explicit?: string): string {
  if (explicit) return explicit
  try {
    const pkg = createRequire(import.meta.url).resolve('@foundry-rs/anvil-linux-amd64/package.json')
    const bin = join(dirname(pkg), 'bin', 'anvil')
    if (existsSync(bin)) return bin
  } catch {
    // package not installed (other platform): fall back to PATH
  }
  return 'anvil'
}

/**
 * Command-line arguments for the given options (port 0 = let the OS pick). `loadState` is the
 * snapshot to start from. anvil is never asked to write state itself (`--state`,
 * `--dump-state`): it rewrites the file in place, and a kill in the middle of that leaves a
 * truncated file that it then refuses to load. Snapshots are taken over RPC instead (see
 * `saveAnvilState`).
 */
export function anvilArgs(opts: StartAnvilOptions & { loadState?: string | undefined }): string[] {
  const args = ['--host', '127.0.0.1', '--port', String(opts.port ?? 0), '--chain-id', String(opts.chainId ?? 31337)]
  args.push('--cache-path', opts.cachePath)
  if (opts.loadState) args.push('--load-state', opts.loadState)
  if (opts.blockTime !== undefined) args.push('--block-time', String(opts.blockTime))
  args.push(...(opts.extraArgs ?? []))
  return args
}

/**
 * Starts anvil on 127.0.0.1 and resolves once it answers `eth_chainId`.
 *
 * @example
 * const anvil = await startAnvil({ cachePath: join(dataDir, 'anvil-cache'), statePath: join(dataDir, 'anvil-state.json') })
 * const client = createPublicClient({ transport: http(anvil.rpcUrl) })
 * await anvil.stop()
 */
export async function startAnvil(opts: StartAnvilOptions): Promise<AnvilInstance> {
  if (!opts.cachePath) throw new Error('startAnvil: cachePath is required')
  await mkdir(opts.cachePath, { recursive: true })
  if (opts.statePath) await mkdir(dirname(opts.statePath), { recursive: true })
  const loadState = opts.statePath && (await checkStateFile(opts.statePath)) ? opts.statePath : undefined
  const bin = resolveAnvilBinary(opts.anvilBin)
  const args = anvilArgs({ ...opts, loadState })
  // Its own process group: a Ctrl-C in the terminal (SIGINT to the whole foreground group) must
  // not stop anvil before `stop()` has taken the last snapshot. If node dies without stopping
  // it, the next start finds it through `anvil.json`, saves its state and stops it.
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true })

  const tail: string[] = []
  let announcedPort: number | undefined
  let onPort: ((port: number) => void) | undefined
  const remember = (line: string) => {
    tail.push(line)
    if (tail.length > OUTPUT_TAIL_LINES) tail.shift()
  }
  // Always drain both pipes: a full pipe would block anvil.
  createInterface({ input: child.stdout! }).on('line', (line) => {
    remember(line)
    const match = announcedPort === undefined ? LISTENING_RE.exec(line) : null
    if (match) {
      announcedPort = Number(match[1])
      onPort?.(announcedPort)
    }
  })
  createInterface({ input: child.stderr! }).on('line', remember)

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }))
  })
  let spawnError: Error | undefined
  child.on('error', (err) => {
    spawnError = err
    opts.logger?.error({ err, bin }, 'anvil process error')
  })

  let stopping: Promise<void> | undefined
  let rpcUrl: string | undefined
  const snapshots = opts.statePath ? stateSnapshots(opts.statePath, opts.stateIntervalMs ?? 1000, opts.logger) : undefined
  const killOnExit = () => child.kill('SIGTERM')
  process.once('exit', killOnExit)
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      process.removeListener('exit', killOnExit)
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
      if (snapshots && rpcUrl) await snapshots.stop(rpcUrl)
      child.kill('SIGTERM')
      let timer: NodeJS.Timeout | undefined
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), opts.stopTimeoutMs ?? 10_000)
      })
      const outcome = await Promise.race([exited, timedOut])
      clearTimeout(timer)
      if (outcome === 'timeout') {
        opts.logger?.warn({ pid: child.pid }, 'anvil did not exit after SIGTERM; sending SIGKILL')
        child.kill('SIGKILL')
        await exited
      }
    })()
    return stopping
  }

  const failure = (reason: string, cause?: unknown) =>
    new Error(`startAnvil: ${reason} (${bin} ${args.join(' ')})\n${tail.join('\n')}`.trimEnd(), { cause })
  const timeoutMs = opts.startTimeoutMs ?? 20_000

  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(failure('timed out waiting for anvil to listen')), timeoutMs)
      const settle = (fn: () => void) => {
        clearTimeout(timer)
        fn()
      }
      if (announcedPort !== undefined) settle(() => resolve(announcedPort!))
      onPort = (p) => settle(() => resolve(p))
      child.once('error', (err) => settle(() => reject(failure(`cannot run anvil: ${err.message}`, err))))
      if (spawnError) settle(() => reject(failure(`cannot run anvil: ${spawnError!.message}`, spawnError)))
      void exited.then(({ code, signal }) =>
        settle(() => reject(failure(`anvil exited before listening (code ${code}, signal ${signal})`))),
      )
    })
    const url = `http://127.0.0.1:${port}`
    await waitForRpc(url, timeoutMs, exited)
    rpcUrl = url
    snapshots?.start(url)
    opts.logger?.info({ rpcUrl: url, pid: child.pid, statePath: opts.statePath, loaded: !!loadState }, 'anvil started')
    void exited.then(({ code, signal }) => {
      snapshots?.halt()
      if (!stopping) opts.logger?.error({ code, signal, output: tail.slice(-10) }, 'anvil exited unexpectedly')
    })
    const saveState = async () => {
      if (opts.statePath) await saveAnvilState(url, opts.statePath)
    }
    return { rpcUrl: url, port, process: child, stop, saveState, stateChanged: () => snapshots?.markDirty() }
  } catch (err) {
    await stop()
    throw err
  }
}

/**
 * A state file that does not parse would make anvil exit at once with a JSON error; say instead
 * what it is and what to do. Only our own atomic snapshots are ever written there, so this means
 * the file was damaged from outside.
 */
async function checkStateFile(path: string): Promise<boolean> {
  if (!existsSync(path)) return false
  try {
    JSON.parse(await readFile(path, 'utf8'))
    return true
  } catch (err) {
    throw new Error(
      `startAnvil: the chain state file ${path} is damaged (${(err as Error).message}). ` +
        'Move it away to start from an empty chain (the reference contracts are then deployed again).',
    )
  }
}

/**
 * Writes anvil's current state to `path` atomically: `anvil_dumpState` (gzipped JSON, hex),
 * unzipped into a temporary file that is synced and renamed over `path`. A crash at any moment
 * leaves either the previous snapshot or the new one, never a partial file.
 *
 * @example
 * await saveAnvilState('http://127.0.0.1:8545', '.data/chain/anvil-state.json')
 */
export async function saveAnvilState(rpcUrl: string, path: string): Promise<void> {
  const hex = await rpcCall<string>(rpcUrl, 'anvil_dumpState', [], 30_000)
  const bytes = Buffer.from(hex.slice(2), 'hex')
  const json = bytes[0] === 0x1f && bytes[1] === 0x8b ? await gunzipAsync(bytes) : bytes
  await writeFileAtomic(path, json)
}

const gunzipAsync = promisify(gunzip)

/**
 * The snapshot loop: every `intervalMs`, a snapshot when the block number moved since the last
 * one or the state was marked changed (`anvil_setBalance` changes state without a block). One
 * snapshot at a time; `stop` waits for the one in flight and takes a last one. An idle chain
 * costs one `eth_blockNumber` per interval.
 */
function stateSnapshots(path: string, intervalMs: number, logger?: ChainLogger) {
  let timer: NodeJS.Timeout | undefined
  let halted = false
  let inFlight: Promise<void> = Promise.resolve()
  let savedBlock: string | undefined
  let dirty = false
  const take = async (rpcUrl: string, force: boolean) => {
    const block = await rpcCall<string>(rpcUrl, 'eth_blockNumber', [], 5_000)
    if (!force && !dirty && block === savedBlock) return
    dirty = false
    await saveAnvilState(rpcUrl, path)
    savedBlock = block
  }
  const schedule = (rpcUrl: string) => {
    if (halted) return
    timer = setTimeout(() => {
      inFlight = take(rpcUrl, false)
        .catch((err) => {
          dirty = true
          if (!halted) logger?.warn({ err }, 'anvil state snapshot failed; retrying on the next interval')
        })
        .finally(() => schedule(rpcUrl))
    }, intervalMs)
    timer.unref()
  }
  return {
    start: schedule,
    markDirty() {
      dirty = true
    },
    halt() {
      halted = true
      clearTimeout(timer)
    },
    async stop(rpcUrl: string) {
      halted = true
      clearTimeout(timer)
      await inFlight
      await take(rpcUrl, true).catch((err) => logger?.error({ err }, 'last anvil state snapshot failed'))
    },
  }
}

async function rpcCall<T>(rpcUrl: string, method: string, params: unknown[], timeoutMs: number): Promise<T> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  })
  const body = (await res.json()) as { result?: T; error?: { message?: string } }
  if (body.error || body.result === undefined) throw new Error(`${method}: ${body.error?.message ?? 'no result'}`)
  return body.result
}

/** Polls `eth_chainId` until it answers, anvil exits, or the timeout passes. */
async function waitForRpc(rpcUrl: string, timeoutMs: number, exited: Promise<unknown>): Promise<void> {
  let hasExited = false
  exited.then(() => {
    hasExited = true
  })
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  while (Date.now() < deadline && !hasExited) {
    try {
      await rpcCall<string>(rpcUrl, 'eth_chainId', [], 1000)
      return
    } catch (err) {
      lastError = err
    }
    await delay(25)
  }
  throw new Error(`startAnvil: ${rpcUrl} did not answer eth_chainId`, { cause: lastError })
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
