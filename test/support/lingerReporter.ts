import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import type { Reporter, TestModule, TestSpecification } from 'vitest/node'

/**
 * A watchdog for CI (`.ci/run` adds it as a reporter), so that a run never hangs silently:
 * - once every test file has ended, vitest still stops its workers and waits for their output to
 *   close; a process a test left behind that holds a worker's stdout or stderr keeps it waiting for
 *   ever. After `LINGER_MS` this prints every process left under the run (its command and where its
 *   stdout and stderr go) and ends those that are not vitest's own, so the run can finish;
 * - while files run, when one has run for `FILE_MS` (the slowest takes about a minute), it prints
 *   the files still running and the processes under the run, and ends the run with status 1.
 */
const LINGER_MS = 60_000
const FILE_MS = 10 * 60_000

type Proc = { pid: number; ppid: number; args: string; out: string; err: string }

function processes(): Proc[] {
  const all: Proc[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 240)
      const fd = (n: number) => { try { return readlinkSync(`/proc/${name}/fd/${n}`) } catch { return '-' } }
      all.push({ pid: Number(name), ppid, args, out: fd(1), err: fd(2) })
    } catch {}
  }
  return all
}

/** The processes under this one, children first. */
function descendants(): Proc[] {
  const all = processes()
  const under: Proc[] = []
  let frontier = [process.pid]
  while (frontier.length) {
    const next = all.filter((p) => frontier.includes(p.ppid))
    under.push(...next)
    frontier = next.map((p) => p.pid)
  }
  return under
}

const isVitests = (p: Proc) => /vitest[/\\]dist[/\\]workers[/\\]/.test(p.args)
const describeAll = (ps: Proc[]) => ps.map((p) => `  pid ${p.pid} (parent ${p.ppid}) out=${p.out} err=${p.err}: ${p.args}`).join('\n') || '  (none)'

export default class LingerReporter implements Reporter {
  private total = 0
  private ended = 0
  private readonly running = new Map<string, number>()
  private lastEnd = Date.now()
  private timer: NodeJS.Timeout | undefined
  private cleanups = 0

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>) {
    this.total = specifications.length
    this.timer = setInterval(() => this.check(), 10_000)
    this.timer.unref()
  }

  onTestModuleStart(module: TestModule) {
    this.running.set(module.moduleId, Date.now())
  }

  onTestModuleEnd(module: TestModule) {
    this.running.delete(module.moduleId)
    this.ended++
    this.lastEnd = Date.now()
  }

  onTestRunEnd() {
    clearInterval(this.timer)
  }

  private check() {
    const idle = Date.now() - this.lastEnd
    if (this.ended >= this.total && idle > LINGER_MS) {
      const left = descendants()
      if (this.cleanups++ >= 5) {
        console.error(`[linger] the run still has not ended after every stray process was ended; the processes under it:\n${describeAll(left)}`)
        process.exit(1)
      }
      const strays = left.filter((p) => !isVitests(p))
      console.error(`[linger] every test file ended ${Math.round(idle / 1000)} s ago and the run has not: the processes under it:\n${describeAll(left)}`)
      for (const p of strays) {
        try {
          process.kill(p.pid, 'SIGKILL')
          console.error(`[linger] ended pid ${p.pid}, left behind by a test: ${p.args}`)
        } catch {}
      }
      this.lastEnd = Date.now()
    } else if ([...this.running.values()].some((since) => Date.now() - since > FILE_MS)) {
      const files = [...this.running].map(([id, since]) => `${id} (for ${Math.round((Date.now() - since) / 1000)} s)`)
      console.error(`[linger] a test file has run for more than ${FILE_MS / 60_000} minutes; still running:\n  ${files.join('\n  ')}\nthe processes under the run:\n${describeAll(descendants())}`)
      process.exit(1)
    }
  }
}
