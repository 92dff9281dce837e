import type pg from 'pg';
import type { SessionAttrs } from './url.js';

/**
 * What a PostgreSQL session is, as target_session_attrs asks (a primary, a standby, writable or not), and
 * the refusals of a host that another attempt would not change: hosts.ts's choice of host reads both.
 */

/** What target_session_attrs looks at in a session. */
export interface SessionRole {
  inRecovery: boolean;
  readOnly: boolean;
}

/**
 * pg_is_in_recovery() is what tells a hot standby from the primary: a standby does not set
 * default_transaction_read_only, so that setting alone (what some drivers read) would settle on one.
 */
const ROLE_QUERY = "SELECT pg_is_in_recovery() AS in_recovery, current_setting('transaction_read_only') = 'on' AS read_only";

export const WANTED: Record<SessionAttrs, (role: SessionRole) => boolean> = {
  'read-write': (role) => !role.inRecovery && !role.readOnly,
  primary: (role) => !role.inRecovery,
  any: () => true,
  standby: (role) => role.inRecovery,
  'read-only': (role) => role.inRecovery || role.readOnly,
};

/** The role of the session `client` is, asked within `timeoutMs`. */
export async function sessionRole(client: pg.ClientBase, timeoutMs: number): Promise<SessionRole> {
  // query_timeout per query is supported by pg but missing from its typings.
  const { rows } = await client.query<{ in_recovery: boolean; read_only: boolean }>({
    text: ROLE_QUERY,
    query_timeout: Math.max(1, timeoutMs),
  } as pg.QueryConfig);
  return { inRecovery: rows[0]!.in_recovery, readOnly: rows[0]!.read_only };
}

/** A role as a person reads it: "a standby (in recovery)". */
export function describeRole(role: SessionRole): string {
  // A primary can be read-only: default_transaction_read_only, or an orchestrator holding a promoted
  // standby read-only until the old primary is surely gone (pg_auto_failover's stop_replication).
  return role.inRecovery ? 'a standby (in recovery)' : role.readOnly ? 'a read-only primary' : 'a writable primary';
}

/** A session that target_session_attrs does not want: a standby where the primary is asked for, say. */
export class UnwantedSessionError extends Error {
  constructor(label: string, attrs: SessionAttrs, role: SessionRole) {
    super(`${label} is ${describeRole(role)}, not what target_session_attrs=${attrs} asks for`);
    this.name = 'UnwantedSessionError';
  }
}

/** The password or role refused, the database missing. */
const FINAL_CODES = new Set(['28P01', '28000', '3D000']);

/**
 * A refusal another attempt at the same host will not change: its settings refuse the URL's password, role
 * or database, or TLS the URL asks for. Once every host of the URL has refused so, the attempts end, where
 * they went on until DB_TIMEOUT_MS (a start that failed 5 s late, every request waiting as long). Until
 * then the next host is tried: hosts need not share their settings.
 */
export function finalRefusal(error: object): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && FINAL_CODES.has(code)) return true;
  return error instanceof Error && error.message === 'The server does not support SSL connections';
}
