import { MAX_NOTIFY_PAYLOAD, type NodeBus } from './nodeBus.ts'
import type { ActorEntry } from './actorKind.ts'
import type { CommitWatch } from './commitWatch.ts'

const CHANNEL = 'actor_commit'

/**
 * Commits made on other nodes, heard at once: while other nodes live, each node publishes the
 * ids it committed (batched per turn of the event loop, one NOTIFY per 7.9 KB of ids) and every
 * node re-reads those its requests and streams wait for, then tells its commit watch. A nudge
 * lost (a reconnect, a node that does not yet know it has company) costs latency only: waiters
 * also read the row on a slow timer, and a reconnect re-reads every watched actor.
 *
 * @example
 * const remote = createRemoteCommits({ bus, node: 'n1', watch, reload, alone: () => false })
 * remote.committed(entry.id) // after each local commit
 */
export function createRemoteCommits({ bus, node, watch, reload, alone }: {
  bus: NodeBus
  node: string
  watch: CommitWatch
  /** Reads the actor's row (not the cache). */
  reload(id: string): Promise<ActorEntry | undefined>
  alone(): boolean
}) {
  let pending = new Set<string>()
  let scheduled = false
  const tell = (id: string) => void reload(id).then((e) => e && watch.emit(e), () => {})

  function flush(): void {
    scheduled = false
    const ids = pending
    pending = new Set()
    let payload = node
    for (const id of ids) {
      if (payload.length + id.length + 1 > MAX_NOTIFY_PAYLOAD) {
        bus.publish(CHANNEL, payload)
        payload = node
      }
      payload += `,${id}`
    }
    if (payload !== node) bus.publish(CHANNEL, payload)
  }

  bus.subscribe(CHANNEL, (payload) => {
    const [from, ...ids] = payload.split(',')
    if (from === node) return
    for (const id of ids) if (watch.watching(id)) tell(id)
  })
  bus.onReconnect(() => {
    for (const id of watch.watched()) tell(id)
  })

  return {
    /** A local commit of actor `id`: other nodes hear of it (nothing is sent while this node is alone). */
    committed(id: string): void {
      if (alone()) return
      pending.add(id)
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    },
  }
}
