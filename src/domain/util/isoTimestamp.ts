const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/**
 * A timestamp as responses carry it (ISO 8601, UTC, milliseconds). Timestamps arrive as Date or,
 * through MikroORM's pool type parsers, as strings; ISO ones pass through unparsed.
 *
 * @example
 * isoTimestamp('2026-11-23 12:00:00.123456+00') // '2026-11-23T12:00:00.123Z'
 */
export function isoTimestamp(v: Date | string): string {
  return typeof v === 'string' && ISO_UTC.test(v) ? v : new Date(v).toISOString()
}
