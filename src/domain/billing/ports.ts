import type { CreditKind } from './creditKinds.ts'

/*
 * `Queryable` (an open transaction or connection the domain hands from one store to another, so
 * a ledger write commits or rolls back with the caller's other writes) and `SqlWrite` (a write
 * described rather than run, sent with a commit's own statement) are the runtime's SQL vocabulary
 * (src/actors/runtime/sql.ts): only stores run statements on them; the domain passes them on.
 */
import type { Queryable, SqlWrite } from '../../actors/runtime/index.ts'
export type { Queryable, SqlWrite }

export type CreditEntry = {
  id: string
  accountId: string
  kind: CreditKind
  /** Signed: a grant is positive, a charge negative. */
  credits: number
  /** The account's balance after it in the ledger's order; null for a charge not folded yet (credits_fold). */
  balanceAfter: number | null
  ref: string
  createdAt: string
  /** The exact timestamp, for cursors. */
  cursorAt: string
}

/** Credits held for a call in flight; settled by its charge or released. */
export type CreditReservation = { id: string; accountId: string; credits: number; ref: string }

/**
 * The credit ledger's storage (implemented in src/adapters/db/credits.repository.ts). Charges take
 * the account row's lock, so one account's charges are serialised and the balance never goes below
 * zero; holds take room in the account's stripes, under their own locks, and never hold more than
 * the free credits (balance less what is held). Methods that take `tx` run in the caller's transaction when given one,
 * else in a transaction of their own.
 */
export interface CreditsRepository {
  /** Appends an entry once per (kind, ref); a repeat returns the first one with `created: false`. */
  append(input: { accountId: string; kind: CreditKind; credits: number; ref: string }, tx?: Queryable): Promise<{ entry: CreditEntry; created: boolean }>
  /** Holds credits (once per (account, ref)); throws InsufficientCreditsError when balance - reserved is too small. */
  reserve(input: { accountId: string; credits: number; ref: string }, tx?: Queryable): Promise<CreditReservation>
  /**
   * Ends a reservation with a charge of `credits` (capped at what the account can pay), written
   * once per (kind, ref): a second settle with the same ref charges nothing more.
   */
  settle(
    reservation: CreditReservation,
    charge: { credits: number; ref: string; kind: CreditKind },
    tx?: Queryable,
  ): Promise<{ entry: CreditEntry; created: boolean }>
  /**
   * A hold described for the caller to send with its own writes (a run's first model call, held in
   * the run's insert): made under `id` and `ref`, and the whole statement fails when the account's
   * free credits do not cover it (SQLSTATE CR402, as `coverRefusalOf` reads it).
   */
  reserveWrite(input: { id: string; accountId: string; credits: number; ref: string }): SqlWrite
  /** The same settle, described for the caller to send with its own writes (the answer is not read). */
  settleWrite(reservation: CreditReservation, charge: { credits: number; ref: string; kind: CreditKind }): SqlWrite
  /** Drops a reservation without a charge; false when it was already settled or released. */
  release(reservation: CreditReservation, tx?: Queryable): Promise<boolean>
  /** The same, found by the account and the ref it was made under (a call given up on). */
  releaseByRef(held: { accountId: string; ref: string }, tx?: Queryable): Promise<boolean>
  /**
   * A sale between two accounts in the caller's transaction: `from` pays `credits`
   * (`market_purchase`), `to` receives them (`market_sale`) and pays the platform `fee`
   * (`market_fee`), each entry once per `ref`. Both account rows are locked in id order (the
   * caller may have locked them already, in the same order). `releaseRef` first drops the payer's
   * reservation made under that ref (an accepted bid's), so the reserved credits pay. Throws
   * InsufficientCreditsError when the payer's free credits do not cover it; `created: false` when
   * this ref was settled before (a retry writes nothing).
   */
  transfer(
    input: { fromAccountId: string; toAccountId: string; credits: number; feeCredits: number; ref: string; releaseRef?: string | undefined },
    tx: Queryable,
  ): Promise<{ entries: CreditEntry[]; created: boolean }>
  /** Moves the account's pending charges into its row and the ledger; answers how many. */
  fold(accountId: string): Promise<number>
  balance(accountId: string): Promise<{ credits: number; reserved: number }>
  /** Credits debited (negative entries) since each of the given instants. */
  spentSince(accountId: string, since: { day: Date; month: Date }): Promise<{ day: number; month: number }>
  list(
    accountId: string,
    opts: { limit: number; kind?: CreditKind | undefined; after?: { createdAt: string; id: string } | undefined },
  ): Promise<{ entries: CreditEntry[]; more: boolean }>
}
