import type pg from 'pg'
import type { EntityManager } from '@mikro-orm/postgresql'
import { withTransaction } from './transaction.ts'
import { tellAgentAutomations } from './automations.store.ts'
import { actorRowsSql } from '../../actors/runtime/index.ts'
import { InvalidStateError, NotFoundError } from '../../domain/errors.ts'
import { isoTimestamp } from '../../domain/util/isoTimestamp.ts'
import type { CreditsRepository, Queryable } from '../../domain/billing/ports.ts'
import { ListingBidSchema } from '../../domain/marketplace/listing.entity.ts'
import { AgentBusyError, BidUnavailableError, ListingUnavailableError, OwnListingError } from '../../domain/marketplace/errors.ts'
import type { BidRow, ListingFigureValues, ListingRow, ListingsRepository, Settlement } from '../../domain/marketplace/ports.ts'

/** The card a listing keeps when it ends (see `keepCard`). */
type EndedCard = ListingRow['agent'] & { figures: ListingFigureValues | null }
const NO_FIGURES: ListingFigureValues = { portfolioValueUsd: null, creatorFeesEarnedUsd: null, costBasisUsd: null, unrealisedPnlUsd: null, realisedPnlUsd: null }

type Row = {
  id: string
  agent_id: string
  seller_account_id: string
  seller_name: string
  buyer_account_id: string | null
  price_credits: string
  sale_credits: string | null
  fee_credits: string | null
  description: string | null
  status: ListingRow['status']
  created_at: Date
  ended_at: Date | null
  cursor_at: string
  agent_name: string
  strategy: string | null
  skills: string[]
  model: string
  wallet_address: string
  agent_created_at: Date
  launches: string
  ended_card: EndedCard | null
}

/** The runtime's actor rows (src/actors/runtime/sqlApi.ts): an agent's, a launch's (a wallet_op row's id is its actor's). */
const ACTORS = actorRowsSql()
const LAUNCHES_SQL = (agentId: string) => `(select count(*) from wallet_op w join ${ACTORS} x on x.id = w.id where w.agent_id = ${agentId} and w.kind = 'launch' and x.status = 'live')`

// The listing, its seller's display name and the agent's public card as it is now (launches: its
// live ones), and the card kept when it ended (shown instead once the listing is sold or cancelled).
const SELECT = `
  select l.id, l.agent_id, l.seller_account_id, s.name as seller_name, l.buyer_account_id, l.price_credits, l.sale_credits,
         l.fee_credits, l.description, l.status, l.created_at, l.ended_at, l.created_at::text as cursor_at,
         a.name as agent_name, a.strategy, a.skills, a.model, a.wallet_address, a.created_at as agent_created_at,
         ${LAUNCHES_SQL('l.agent_id')} as launches, l.ended_card
    from listing l join account s on s.id = l.seller_account_id join agent a on a.id = l.agent_id`

/**
 * Keeps the agent's public card on the listing as it ends (in the ending transaction, before a
 * sale moves the agent), with the figures read just before: an ended listing shows the agent as
 * it was sold or withdrawn, never as it is now (the buyer's renames, strategy, holdings).
 */
async function keepCard(db: Queryable, listingId: string, figures: ListingFigureValues | undefined) {
  await db.query(
    `update listing l set ended_card = jsonb_build_object('name', a.name, 'strategy', a.strategy, 'skills', to_jsonb(a.skills), 'model', a.model,
       'walletAddress', a.wallet_address, 'createdAt', a.created_at, 'launches', ${LAUNCHES_SQL('a.id')}, 'figures', $2::jsonb)
      from agent a where l.id = $1 and a.id = l.agent_id`,
    [listingId, figures ? JSON.stringify(figures) : null],
  )
}

const rowOf = (r: Row): ListingRow => ({
  id: r.id,
  agentId: r.agent_id,
  sellerAccountId: r.seller_account_id,
  sellerName: r.seller_name,
  buyerAccountId: r.buyer_account_id,
  priceCredits: Number(r.price_credits),
  saleCredits: r.sale_credits === null ? null : Number(r.sale_credits),
  feeCredits: r.fee_credits === null ? null : Number(r.fee_credits),
  description: r.description,
  status: r.status,
  createdAt: isoTimestamp(r.created_at),
  endedAt: r.ended_at ? isoTimestamp(r.ended_at) : null,
  cursorAt: r.cursor_at,
  agent: r.ended_card
    ? { ...pickCard(r.ended_card), createdAt: isoTimestamp(r.ended_card.createdAt), launches: Number(r.ended_card.launches) }
    : { name: r.agent_name, strategy: r.strategy, skills: r.skills, model: r.model, walletAddress: r.wallet_address, createdAt: isoTimestamp(r.agent_created_at), launches: Number(r.launches) },
  figures: r.ended_card ? (r.ended_card.figures ?? NO_FIGURES) : null,
})
const pickCard = ({ name, strategy, skills, model, walletAddress }: EndedCard) => ({ name, strategy, skills, model, walletAddress })

type BidSqlRow = { id: string; listing_id: string; bidder_account_id: string; credits: string; status: BidRow['status']; created_at: Date; ended_at: Date | null; cursor_at: string }
const BID_COLUMNS = 'b.id, b.listing_id, b.bidder_account_id, b.credits, b.status, b.created_at, b.ended_at, b.created_at::text as cursor_at'
const bidOf = (r: BidSqlRow): BidRow => ({
  id: r.id,
  listingId: r.listing_id,
  bidderAccountId: r.bidder_account_id,
  credits: Number(r.credits),
  status: r.status,
  createdAt: isoTimestamp(r.created_at),
  endedAt: r.ended_at ? isoTimestamp(r.ended_at) : null,
  cursorAt: r.cursor_at,
})
const bidRef = (bidId: string) => `bid:${bidId}`

// A money move of the agent not ended: a wallet operation or launch whose actor is not final, or
// one reserved this last minute whose actor is not created yet (a launch seed, a child created
// with its parent's step; a retry reserves it again; a crash in between leaves such a row
// behind, which must not block the agent for ever).
const IN_FLIGHT_SQL = `
  select 1 from wallet_op w left join ${ACTORS} x on x.id = w.id
   where w.agent_id = $1
     and ((x.id is null and w.created_at > now() - interval '1 minute') or x.status not in ('confirmed', 'failed', 'live'))
   limit 1`

/** Locks the accounts in id order: every writer over several accounts does, so none deadlocks another. */
async function lockAccounts(db: Queryable, ids: string[]) {
  await db.query('select id from account where id = any($1::uuid[]) order by id for update', [[...new Set(ids)]])
}

/** Expires the listing's active bids but `keep`, releasing their reserved credits (the caller locked the bidders). */
async function expireBids(db: Queryable, credits: CreditsRepository, listingId: string) {
  const { rows } = await db.query<{ id: string; bidder_account_id: string }>(
    `update listing_bid set status = 'expired', ended_at = now() where listing_id = $1 and status = 'active' returning id, bidder_account_id`,
    [listingId],
  )
  for (const b of rows) await credits.releaseByRef({ accountId: b.bidder_account_id, ref: bidRef(b.id) }, db)
}

/**
 * The agent changes hands (in the sale's transaction), its card as sold kept on the listing: the buyer's, with no payout wallet, no
 * whitelist, no pending guardrail change, no owner's policy of the seller's (its accepts would
 * skip the buyer's guardrails), no scheduled runs, only built-in skills and no chat
 * history, its automations cancelled. Its actor hears `market.sold` through the runtime in this
 * transaction (version fence, journal, the machine's own transition); what that commit asks for
 * runs once the sale committed (the returned announce).
 */
async function moveAgent(db: pg.PoolClient, sold: AgentSold, { agentId, buyer, listingId, keepSkills, figures }: { agentId: string; buyer: string; listingId: string; keepSkills: (s: string[]) => string[]; figures: ListingFigureValues | undefined }) {
  const { rows } = await db.query<{ skills: string[] }>('select skills from agent where id = $1 for update', [agentId])
  await keepCard(db, listingId, figures)
  await db.query(
    `update agent set account_id = $2, payout_wallet = null, skills = $3, run_interval_seconds = 0, updated_at = now() where id = $1`,
    [agentId, buyer, keepSkills(rows[0]?.skills ?? [])],
  )
  await db.query('delete from agent_whitelist where agent_id = $1', [agentId])
  await db.query('delete from agent_pending_change where agent_id = $1', [agentId])
  await db.query('delete from agent_owner_policy where agent_id = $1', [agentId])
  await db.query('delete from chat_message where agent_id = $1', [agentId])
  // The seller's automations of the agent are cancelled with the sale (their actors hear it from their inbox).
  await tellAgentAutomations(db, { agentId, event: { type: 'automation.cancel' }, dedupePrefix: `market:${listingId}` })
  return sold(db, { agentId, listingId, accountId: buyer })
}

/** The agent actor's side of a sale, committed in the sale's transaction; answers what to announce once it committed. */
export type AgentSold = (db: pg.PoolClient, sale: { agentId: string; listingId: string; accountId: string }) => Promise<() => void>

/**
 * The market's storage. Plain SQL for the writes: a sale spans two accounts' ledgers, the agent,
 * its actor and the listing in one transaction on one connection (the ledger's statements run on
 * the caller's connection); MikroORM for the one-row bid read.
 *
 * Lock order, the same in every writer: the listing row, then its bids, then the accounts in id
 * order, then the agent's advisory lock (which every wallet operation and launch takes to record
 * its move, so a move and a sale of one agent are serialised).
 *
 * @example
 * const listings = createListingsRepository({ pool, em, credits, sold })
 * const { listing } = await listings.settle({ listingId, buyerAccountId, feeOf: marketFee, keepSkills })
 */
export function createListingsRepository({ pool, em, credits, sold }: { pool: pg.Pool; em: EntityManager; credits: CreditsRepository; sold: AgentSold }): ListingsRepository {
  async function get(id: string) {
    const { rows } = await pool.query<Row>({ name: 'listing.get', text: `${SELECT} where l.id = $1`, values: [id] })
    return rows[0] && rowOf(rows[0])
  }
  const page = async (where: string, order: string, params: unknown[]) => (await pool.query<Row>(`${SELECT} where ${where} order by ${order} limit $1`, params)).rows.map(rowOf)
  async function bidPage(where: string, accountId: string, { limit, after }: { limit: number; after?: { key: string | number; id: string } | undefined }) {
    const params: unknown[] = [accountId, limit]
    const cond = after ? `and (b.created_at, b.id) < ($${params.push(String(after.key))}::timestamptz, $${params.push(after.id)}::uuid)` : ''
    const { rows } = await pool.query<BidSqlRow>(`select ${BID_COLUMNS} from listing_bid b join listing l on l.id = b.listing_id where ${where} ${cond} order by b.created_at desc, b.id desc limit $2`, params)
    return rows.map(bidOf)
  }

  return {
    get,

    async create({ id, agentId, sellerAccountId, priceCredits, description }) {
      await withTransaction(pool, async (db) => {
        await db.query('select pg_advisory_xact_lock(hashtext($1))', [agentId])
        const { rows } = await db.query<{ account_id: string; status: string }>(
          `select a.account_id, x.status from agent a join ${ACTORS} x on x.id = a.id::text where a.id = $1 for update of a`,
          [agentId],
        )
        if (!rows[0] || rows[0].account_id !== sellerAccountId) throw new NotFoundError('Agent')
        if (rows[0].status === 'deleted') throw new InvalidStateError({ event: 'list the agent', state: 'deleted' })
        if ((await db.query(IN_FLIGHT_SQL, [agentId])).rows.length > 0) throw new AgentBusyError()
        const inserted = await db.query(
          `insert into listing (id, agent_id, seller_account_id, price_credits, description) values ($1, $2, $3, $4, $5)
           on conflict (agent_id) where status = 'active' do nothing`,
          [id, agentId, sellerAccountId, priceCredits, description],
        )
        if (inserted.rowCount === 0) throw new InvalidStateError({ event: 'list the agent', state: 'listed' })
      })
      return (await get(id))!
    },

    listActive({ sort, maxPriceCredits, limit, after }) {
      const params: unknown[] = [limit]
      const conds = [`l.status = 'active'`]
      if (maxPriceCredits !== undefined) conds.push(`l.price_credits <= $${params.push(maxPriceCredits)}`)
      if (sort === 'price') {
        if (after) conds.push(`(l.price_credits, l.id) > ($${params.push(Number(after.key))}::bigint, $${params.push(after.id)}::uuid)`)
        return page(conds.join(' and '), 'l.price_credits, l.id', params)
      }
      if (after) conds.push(`(l.created_at, l.id) < ($${params.push(String(after.key))}::timestamptz, $${params.push(after.id)}::uuid)`)
      return page(conds.join(' and '), 'l.created_at desc, l.id desc', params)
    },

    history(accountId, { limit, after }) {
      const params: unknown[] = [limit, accountId]
      const cond = after ? `and (l.created_at, l.id) < ($${params.push(String(after.key))}::timestamptz, $${params.push(after.id)}::uuid)` : ''
      return page(`(l.seller_account_id = $2 or l.buyer_account_id = $2) ${cond}`, 'l.created_at desc, l.id desc', params)
    },

    async cancel({ id, sellerAccountId, figures }) {
      const done = await withTransaction(pool, async (db) => {
        const { rows } = await db.query(`select id from listing where id = $1 and seller_account_id = $2 and status = 'active' for update`, [id, sellerAccountId])
        if (!rows[0]) return false
        const bidders = await db.query<{ bidder_account_id: string }>(`select bidder_account_id from listing_bid where listing_id = $1 and status = 'active' for update`, [id])
        await lockAccounts(db, bidders.rows.map((b) => b.bidder_account_id))
        await db.query(`update listing set status = 'cancelled', ended_at = now() where id = $1`, [id])
        await keepCard(db, id, figures)
        await expireBids(db, credits, id)
        return true
      })
      return done ? get(id) : undefined
    },

    async settle(s: Settlement) {
      const announce = await withTransaction(pool, (db) => settleIn(db, credits, sold, s))
      announce?.()
      return { listing: (await get(s.listingId))!, created: announce !== null }
    },

    async placeBid({ id, listingId, bidderAccountId, credits: amount }) {
      await withTransaction(pool, async (db) => {
        const { rows } = await db.query<{ status: string; seller_account_id: string }>('select status, seller_account_id from listing where id = $1 for share', [listingId])
        if (!rows[0]) throw new NotFoundError('Listing')
        if (rows[0].seller_account_id === bidderAccountId) throw new OwnListingError()
        if (rows[0].status !== 'active') throw new ListingUnavailableError({ status: rows[0].status })
        await credits.reserve({ accountId: bidderAccountId, credits: amount, ref: bidRef(id) }, db)
        await db.query('insert into listing_bid (id, listing_id, bidder_account_id, credits) values ($1, $2, $3, $4)', [id, listingId, bidderAccountId, amount])
      })
      return (await bidPage('b.id = $1', id, { limit: 1 }))[0]!
    },

    async getBid(id) {
      const b = await em.fork().findOne(ListingBidSchema, { id })
      if (!b) return undefined
      return { id: b.id, listingId: b.listingId, bidderAccountId: b.bidderAccountId, credits: b.credits, status: b.status as BidRow['status'], createdAt: b.createdAt.toISOString(), endedAt: b.endedAt ? b.endedAt.toISOString() : null, cursorAt: b.createdAt.toISOString() }
    },

    async endBid({ id, status }) {
      const ended = await withTransaction(pool, async (db) => {
        await db.query('select l.id from listing l join listing_bid b on b.listing_id = l.id where b.id = $1 for update of l', [id])
        const { rows } = await db.query<{ bidder_account_id: string }>(
          `update listing_bid set status = $2, ended_at = now() where id = $1 and status = 'active' returning bidder_account_id`,
          [id, status],
        )
        if (!rows[0]) return false
        await credits.releaseByRef({ accountId: rows[0].bidder_account_id, ref: bidRef(id) }, db)
        return true
      })
      return ended ? (await bidPage('b.id = $1', id, { limit: 1 }))[0] : undefined
    },

    bidsBy: (accountId, p) => bidPage('b.bidder_account_id = $1', accountId, p),
    bidsReceived: (accountId, p) => bidPage('l.seller_account_id = $1', accountId, p),
  }
}

/** The sale's transaction (see `ListingsRepository.settle`): what to announce once it committed; null when this buyer bought it already. */
async function settleIn(db: pg.PoolClient, credits: CreditsRepository, sold: AgentSold, s: Settlement): Promise<(() => void) | null> {
  const { rows } = await db.query<{ agent_id: string; seller_account_id: string; buyer_account_id: string | null; price_credits: string; status: string }>(
    'select agent_id, seller_account_id, buyer_account_id, price_credits, status from listing where id = $1 for update',
    [s.listingId],
  )
  const l = rows[0]
  if (!l) throw new NotFoundError('Listing')
  if (l.status === 'sold' && l.buyer_account_id === s.buyerAccountId) return null
  if (l.status !== 'active') throw new ListingUnavailableError({ status: l.status })
  if (l.seller_account_id === s.buyerAccountId) throw new OwnListingError()
  let price = Number(l.price_credits)
  if (s.bidId) {
    const bid = (await db.query<{ bidder_account_id: string; credits: string; status: string }>(
      'select bidder_account_id, credits, status from listing_bid where id = $1 and listing_id = $2 for update', [s.bidId, s.listingId],
    )).rows[0]
    if (!bid || bid.bidder_account_id !== s.buyerAccountId) throw new NotFoundError('Bid')
    if (bid.status !== 'active') throw new BidUnavailableError({ status: bid.status })
    price = Number(bid.credits)
  }
  const bidders = await db.query<{ bidder_account_id: string }>(`select bidder_account_id from listing_bid where listing_id = $1 and status = 'active' for update`, [s.listingId])
  await lockAccounts(db, [s.buyerAccountId, l.seller_account_id, ...bidders.rows.map((b) => b.bidder_account_id)])
  await db.query('select pg_advisory_xact_lock(hashtext($1))', [l.agent_id])
  // The buyer's own other bids on this listing end with the sale: released before the balance
  // check, so the credits they hold do not count against the buyer (a failed check rolls this back).
  const own = await db.query<{ id: string }>(
    `update listing_bid set status = 'expired', ended_at = now() where listing_id = $1 and bidder_account_id = $2 and status = 'active' and id is distinct from $3 returning id`,
    [s.listingId, s.buyerAccountId, s.bidId ?? null],
  )
  for (const b of own.rows) await credits.releaseByRef({ accountId: s.buyerAccountId, ref: bidRef(b.id) }, db)
  const fee = s.feeOf(price)
  await credits.transfer(
    { fromAccountId: s.buyerAccountId, toAccountId: l.seller_account_id, credits: price, feeCredits: fee, ref: `listing:${s.listingId}`, releaseRef: s.bidId && bidRef(s.bidId) },
    db,
  )
  const announce = await moveAgent(db, sold, { agentId: l.agent_id, buyer: s.buyerAccountId, listingId: s.listingId, keepSkills: s.keepSkills, figures: s.figures })
  await db.query(
    `update listing set status = 'sold', buyer_account_id = $2, sale_credits = $3, fee_credits = $4, ended_at = now() where id = $1`,
    [s.listingId, s.buyerAccountId, price, fee],
  )
  if (s.bidId) await db.query(`update listing_bid set status = 'accepted', ended_at = now() where id = $1`, [s.bidId])
  await expireBids(db, credits, s.listingId)
  return announce
}
