import type pg from 'pg'
import type { OpsStore } from '../../domain/ops/ports.ts'
import { listAudit } from './auditTrail.store.ts'
import { agentIdsOfWallet, effectIdsOfTx, firstAgentTxBlock, transactionsOf } from './opsActors.store.ts'
import { setTokenVerified as storeTokenVerified, writeOpsAudit } from './opsActions.store.ts'
import { walletOpFacts } from './opsAgentActivity.store.ts'
import { serviceFigures } from './opsOverview.store.ts'
import { spentTodayUsd } from './walletOp.store.ts'

/**
 * The service's stores as the operator's port (`OpsStore`, src/domain/ops/ports.ts).
 *
 * @example
 * const store = createOpsStore(pool)
 */
export function createOpsStore(pool: pg.Pool): OpsStore {
  return {
    effectIdsOfTx: (hash) => effectIdsOfTx(pool, hash),
    agentIdsOfWallet: (address) => agentIdsOfWallet(pool, address),
    transactionsOf: (ids) => transactionsOf(pool, ids),
    walletOpFacts: (ids) => walletOpFacts(pool, ids),
    serviceFigures: () => serviceFigures(pool),
    firstAgentTxBlock: (agentId) => firstAgentTxBlock(pool, agentId),
    spentTodayUsd: (agentId) => spentTodayUsd(pool, agentId),
    listAudit: (q) => listAudit(pool, q),
    writeAudit: (e, db) => writeOpsAudit(db ?? pool, e),
    setTokenVerified: (p) => storeTokenVerified(pool, p),
  }
}
