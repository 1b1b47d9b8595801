/** `withTransaction(pool, fn)`: BEGIN, `fn` on one pooled connection, COMMIT (ROLLBACK on any error); the runtime's (src/runtime/sql.ts). */
export { withTransaction } from '../../runtime/sql.ts'
