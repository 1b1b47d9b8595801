import type { Principal } from '../accounts/scopes.ts'

/** Who made a change: an API key (by id; with the tool's name when a tool call made it) or a dashboard session (by its signing address). */
export type AuditActor = { type: 'key'; keyId: string | null; tool?: string } | { type: 'session'; address: string | null }

export const auditActorOf = (p: Principal): AuditActor =>
  p.via === 'session' ? { type: 'session', address: p.address ?? null } : { type: 'key', keyId: p.keyId ?? null }

export type AuditEntry = {
  accountId: string
  /** The agent id, or the token address for an operator's verification. */
  subjectId: string
  action: string
  actor: AuditActor | null
  before: unknown
  after: unknown
  /** Seconds from now (the database clock) until the change takes effect. */
  effectiveAfterSeconds: number
}

/** One entry of the trail as the API shows it. */
export type AuditView = {
  id: string
  accountId: string
  subjectId: string
  action: string
  actor: AuditActor | null
  before: unknown
  after: unknown
  at: string
  effectiveAt: string
}

/** A page of the trail, newest first. */
export type AuditPage = { entries: AuditView[]; nextCursor: string | null }
