/**
 * The operations that take an `Idempotency-Key` (the document's operations with that header
 * parameter; test/clientRoutes.test.ts checks the list against the served document). The
 * client sends a fresh key with each call of one of them unless the caller gave one, and every
 * retry of that call reuses it.
 */
export const KEYED_OPERATIONS: ReadonlySet<string> = new Set([
  'POST /launch/venue-a', 'POST /launch/venue-b', 'POST /launch/self-funded',
  'POST /swap/execute', 'POST /wallet/transfer', 'POST /fees/claim',
  'POST /agents/{id}/clone', 'POST /agents/{id}/paper/deposit', 'POST /agents/{id}/runs', 'POST /automations',
  'POST /market/{id}/buy', 'POST /market/bids/{bidId}/accept',
  // Creations: a retry after a lost answer gets the first answer again, never a second resource.
  'POST /agents', 'POST /agents/{id}/whitelist', 'POST /keys', 'POST /market', 'POST /market/{id}/bids', 'POST /skills/custom', 'POST /webhooks',
])
