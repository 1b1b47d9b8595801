import type { Logger } from './runtimeLogger.ts'

/**
 * Runs `poll` every `pollMs`, one at a time, and sooner when `wake(delayMs)` asks for it (a
 * timer due before the next regular poll). `poll` answers when the next timer is due, if known.
 * A poll that fails (the database down, or being failed over) backs off: the next is skipped for
 * twice as long each time, `maxBackoffMs` at most, and the first that succeeds ends the pause.
 */
export function createPoller({ pollMs, logger, poll, maxBackoffMs = 5_000 }: { pollMs: number; logger: Logger; poll(): Promise<number | undefined>; maxBackoffMs?: number }) {
  let stopped = true
  let failures = 0
  let pausedUntil = 0
  let interval: NodeJS.Timeout | undefined
  let wakeTimer: NodeJS.Timeout | undefined
  let wakeAt = Infinity
  let ticking = false

  function wake(delayMs: number) {
    if (stopped) return
    const at = Date.now() + delayMs
    if (at >= wakeAt) return
    if (wakeTimer) clearTimeout(wakeTimer)
    wakeAt = at
    wakeTimer = setTimeout(() => {
      wakeAt = Infinity
      void tick()
    }, delayMs + 5)
    wakeTimer.unref()
  }

  async function tick(): Promise<void> {
    if (ticking || stopped || Date.now() < pausedUntil) return
    ticking = true
    try {
      const next = await poll()
      if (failures > 0) logger.info({ failures }, 'actor runtime poll succeeded again')
      failures = 0
      pausedUntil = 0
      if (next !== undefined && next < pollMs) wake(next)
    } catch (err) {
      failures++
      const pauseMs = Math.min(pollMs * 2 ** failures, maxBackoffMs)
      pausedUntil = Date.now() + pauseMs
      logger.error({ err, failures, pauseMs }, 'actor runtime poll failed')
    } finally {
      ticking = false
    }
  }

  return {
    wake,
    /** Polls once at once, then every `pollMs`. */
    async start() {
      stopped = false
      await tick()
      interval = setInterval(() => void tick(), pollMs)
      interval.unref()
    },
    stop() {
      stopped = true
      if (interval) clearInterval(interval)
      if (wakeTimer) clearTimeout(wakeTimer)
    },
  }
}
