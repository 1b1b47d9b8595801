import type { Logger } from './runtimeLogger.ts'

/**
 * Runs `poll` every `pollMs`, one at a time, and sooner when `wake(delayMs)` asks for it (a
 * timer due before the next regular poll). `poll` answers when the next timer is due, if known.
 */
export function createPoller({ pollMs, logger, poll }: { pollMs: number; logger: Logger; poll(): Promise<number | undefined> }) {
  let stopped = true
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
    if (ticking || stopped) return
    ticking = true
    try {
      const next = await poll()
      if (next !== undefined && next < pollMs) wake(next)
    } catch (err) {
      logger.error({ err }, 'actor runtime poll failed')
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
