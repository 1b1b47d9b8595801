import { constants } from 'node:fs'
import { open, rename } from 'node:fs/promises'
import { dirname } from 'node:path'

/**
 * Replaces `path` with `data` so that a crash at any moment leaves the old content or the new,
 * never a partial file: a temporary file beside it is written and fsynced, renamed over `path`,
 * and the directory is fsynced so the rename itself is durable.
 *
 * @example
 * await writeFileAtomic('.data/chain/manifest.json', JSON.stringify(manifest))
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, { mode = 0o600 }: { mode?: number } = {}): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`
  const file = await open(tmp, 'w', mode)
  try {
    await file.writeFile(data)
    await file.sync()
  } finally {
    await file.close()
  }
  await rename(tmp, path)
  await syncDir(dirname(path))
}

/** Makes a new or renamed directory entry durable; not supported on every platform, so best effort. */
export async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, constants.O_RDONLY)
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  } catch {
    // ignore
  }
}
