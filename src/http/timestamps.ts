/**
 * RFC 3339 timestamps in requests (`format: 'date-time'`: a webhook replay's window), checked and read by
 * one grammar, so that every text the check lets through is read as the instant it names. `Date.parse`
 * is not that reader: it answers NaN for a leap second (`23:59:60Z`) and for an hours-only offset (`+01`),
 * both of which the check took, and a NaN window replayed nothing on SQLite and failed on PostgreSQL.
 *
 * The grammar is the one the requests took before (Ajv's `date-time`), so no client's timestamp is
 * refused now that was read before: a date and a time separated by `T`, `t` or a space (RFC 3339 5.6's
 * note), any number of fraction digits (read to the millisecond), and a zone that is `Z`, `z` or an
 * offset `±hh:mm`, also written `±hhmm` or `±hh`. A second of 60 is a leap second, which only the last
 * minute of a UTC day has; it is read as the first instant of the next minute, the instant that follows
 * it.
 */
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;

const MINUTE_MS = 60_000;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** The instant an RFC 3339 timestamp names, in milliseconds since 1970 (UTC), or undefined for a text that is not one. */
export function timestampMillis(text: string): number | undefined {
  const parts = TIMESTAMP.exec(text);
  if (parts === null) return undefined;
  const [year, month, day, hour, minute, second] = parts.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const fraction = parts[7] ?? '';
  const sign = parts[9] === '-' ? -1 : 1;
  const offsetHours = Number(parts[10] ?? 0);
  const offsetMinutes = Number(parts[11] ?? 0);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 60 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const offset = sign * (offsetHours * 60 + offsetMinutes);
  if (second === 60) {
    // A leap second: at 23:59 UTC only (the local time less the offset, a day's minutes apart at most).
    const utcMinute = (((hour * 60 + minute - offset) % 1440) + 1440) % 1440;
    if (utcMinute !== 1439) return undefined;
  }
  // setUTCFullYear, not Date.UTC, which reads the years 0–99 as 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, Number(fraction.slice(0, 3).padEnd(3, '0')));
  return date.getTime() - offset * MINUTE_MS;
}

/** The check of `format: 'date-time'` (http/validation.ts): the texts timestampMillis reads. */
export function isTimestamp(text: string): boolean {
  return timestampMillis(text) !== undefined;
}
