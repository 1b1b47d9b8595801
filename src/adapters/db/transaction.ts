/** `withTransaction(pool, fn)`: BEGIN, `fn` on one pooled connection, COMMIT (ROLLBACK on any error); the runtime's (src/actors/runtime/sql.ts). */
export { withTransaction } from '../../actors/runtime/index.ts'
