import { z } from 'zod'
import { ValidationError } from '../errors.ts'

/**
 * An opaque cursor over (created_at, id), newest first. The timestamp is kept as the database
 * gave it (microseconds included) so that paging neither skips nor repeats rows.
 */
export function encodeCursor(createdAt: Date | string, id: string): string {
  const c = typeof createdAt === 'string' ? createdAt : createdAt.toISOString()
  return Buffer.from(JSON.stringify([c, id])).toString('base64url')
}

/** A timestamp as our cursors carry it: ISO 8601 or PostgreSQL's text form, with a zone. */
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2})(:?(\d{2}))?)$/

/**
 * True when PostgreSQL takes the timestamp as it is written. JavaScript's Date is laxer: it
 * rolls `2026-02-30` over to March and takes year 0000, which PostgreSQL refuses (a 500 then).
 *
 * @example
 * isPostgresTimestamp('2026-02-28T10:00:00.123456+00') // true
 * isPostgresTimestamp('2026-02-30T10:00:00Z') // false
 */
export function isPostgresTimestamp(value: string): boolean {
  const m = TIMESTAMP.exec(value)
  if (!m) return false
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeapYear(year) ? 1 : 0)
  const zoneOk = m[8] === 'Z' || (Number(m[9]) <= 15 && Number(m[11] ?? 0) <= 59)
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59 && zoneOk
}

const isLeapYear = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0

/** The cursor's position; a cursor that is not one of ours is a 422 naming `cursor`. */
export function decodeCursor(cursor: string | undefined): { createdAt: string; id: string } | undefined {
  if (cursor === undefined) return undefined
  try {
    const [c, id] = z
      .tuple([z.string().max(40).refine(isPostgresTimestamp), z.uuid()])
      .parse(JSON.parse(Buffer.from(cursor, 'base64url').toString()))
    return { createdAt: c, id }
  } catch {
    throw new ValidationError({ cursor: 'Invalid cursor.' })
  }
}
