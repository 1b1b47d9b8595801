import type pg from 'pg'
import { expect } from 'vitest'
import { journalEvents } from '../../src/actors/runtime/actorJournal.store.ts'
import type { ActorKind } from '../../src/actors/runtime/actorKind.ts'
import { MIGRATED_EVENT, replayJournal } from '../../src/actors/runtime/replay.ts'

/**
 * Checks that an actor whose stored snapshot was migrated from machine version `from` replays,
 * with this build's kind alone, to the snapshot, status and state value it has: its journal
 * holds the loader's one migration entry (from `from` to the kind's version), and the fold starts
 * there, from the snapshot that entry recorded, through the kind's own `migrate`. Read in one
 * repeatable-read transaction, so a commit landing meanwhile cannot part the journal from the row.
 *
 * @example
 * await expectReplaysFromMigration(pool, agentKind, agentId, 1)
 */
export async function expectReplaysFromMigration(pool: pg.Pool, kind: ActorKind, id: string, from: number): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('begin isolation level repeatable read')
    const { rows: [row] } = await client.query('select version::int as version, machine_version, status, state_value, snapshot from actor where id = $1', [id])
    const journal = await journalEvents(client, id)
    await client.query('commit')
    expect(journal).toHaveLength(row.version)
    const migrations = journal.filter((j) => j.event.type === MIGRATED_EVENT)
    expect(migrations.map((j) => j.event)).toEqual([expect.objectContaining({ from, to: kind.machineVersion })])
    const replayed = replayJournal(kind, journal.map((j) => j.event), id)
    expect(replayed.foldedFrom).toBe(migrations[0]!.seq)
    expect(replayed.persisted).toEqual(row.snapshot)
    expect(replayed.status).toBe(row.status)
    expect(replayed.snapshot.value).toEqual(row.state_value)
    expect(row.machine_version).toBe(kind.machineVersion)
  } finally {
    client.release()
  }
}
