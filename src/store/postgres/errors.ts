import pg from 'pg';
import { StoreUnavailableError } from '../store.js';

/**
 * Which PostgreSQL failures mean "the database cannot serve right now" (answered 503 + Retry-After)
 * rather than a bug in a query (answered 500). Decided by SQLSTATE and error class, never by message.
 */

/** SQLSTATE classes: 08 connection exception, 53 insufficient resources, 58 system (I/O) error. */
const UNAVAILABLE_CLASSES = new Set(['08', '53', '58']);

/** Single SQLSTATEs outside those classes that are still about availability. */
const UNAVAILABLE_CODES = new Set([
  '57014', // query_canceled: statement_timeout fired
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down, in recovery)
  '57P05', // idle_session_timeout
  '25006', // read_only_sql_transaction: a standby, or default_transaction_read_only
  '40001', // serialization_failure: a distributed engine asks the client to retry
  '40P01', // deadlock_detected: retrying succeeds
  '55P03', // lock_not_available: lock_timeout fired
  '55000', // object_not_in_prerequisite_state (e.g. the cluster is read-only or in recovery)
]);

export function isUnavailable(error: unknown): boolean {
  if (error instanceof pg.DatabaseError) {
    const code = error.code ?? '';
    return UNAVAILABLE_CODES.has(code) || UNAVAILABLE_CLASSES.has(code.slice(0, 2));
  }
  // Programming errors are bugs, not outages.
  if (error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError) return false;
  // Everything else the driver throws is about the connection: a socket error (ECONNREFUSED,
  // ECONNRESET, ETIMEDOUT...), a connection ended under a query, a pool wait or read timeout.
  return error instanceof Error;
}

/**
 * An outage as a StoreUnavailableError (503), its message keeping the driver's reason: a start refused for
 * it prints this message alone (store/open.ts), and "sorry, too many clients already" or "The server does
 * not support SSL connections" tells a misconfiguration from an outage where a bare SQLSTATE does not. The
 * driver's messages carry no password (the URL's is never in them; hosts.test.ts and open.test.ts hold it).
 */
export function translatePgError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || !isUnavailable(error)) return error;
  const { code, message } = error as { code?: unknown; message?: unknown };
  const reason = typeof message === 'string' ? message.trim() : '';
  // A socket error's message names its code already ("connect ECONNREFUSED 127.0.0.1:5432").
  const named = typeof code === 'string' && code !== '' && !reason.includes(code) ? ` (${code})` : '';
  return new StoreUnavailableError(`PostgreSQL unavailable${named}${reason === '' ? '' : `: ${reason}`}`, { cause: error });
}
