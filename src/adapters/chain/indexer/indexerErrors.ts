/** A range was fetched from a chain that changed under it; the caller checks for a reorg again. */
export class RangeReorgedError extends Error {
  override name = 'RangeReorgedError'
}

/** Another indexer (another node) wrote this range first; the pass goes on from its checkpoint. */
export class CheckpointMovedError extends Error {
  override name = 'CheckpointMovedError'
}
