import type { SessionsRepository } from './ports.ts'
import { sessionIdHash } from './sessionToken.ts'

/**
 * Ends a dashboard session (its cookie stops working at once).
 *
 * @example
 * await signOut({ sessions }, { token })
 */
export async function signOut(deps: { sessions: SessionsRepository }, { token }: { token: string }): Promise<void> {
  await deps.sessions.deleteSession(sessionIdHash(token))
}
