import { parseHeaders, renderAnswer, type AnyKeepAnswer, type KeptAnswer, type Outcome } from '../idempotency.js';
import type { Query } from './query.js';

/**
 * How a keyed write claims its key and keeps its answer on PostgreSQL, in the write's own transaction
 * (postgres/idempotency.ts says how the claim settles races between instances).
 */

/** The database's clock in epoch ms: expiry must mean the same to every instance, whatever their clocks. */
export const NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

const CLAIM = `INSERT INTO idempotency_keys AS k (owner, key, fingerprint, status, headers, body, expires_at)
  VALUES ($1, $2, $3, 0, '{}', '', ${NOW_MS} + $4::bigint)
  ON CONFLICT (owner, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, status = 0, headers = '{}', body = '', expires_at = EXCLUDED.expires_at
    WHERE k.expires_at <= ${NOW_MS}
  RETURNING 1`;
export const FIND = `SELECT fingerprint, status, headers, body FROM idempotency_keys WHERE owner = $1 AND key = $2 AND expires_at > ${NOW_MS}`;

export interface KeptRow {
  fingerprint: string;
  status: number;
  headers: string;
  body: string;
}

export function kept(row: KeptRow): KeptAnswer {
  return { fingerprint: row.fingerprint, status: row.status, headers: parseHeaders(row.headers), body: row.body, earlier: true };
}

/**
 * Claims the key for this transaction's write: undefined when the write is to be made, or the answer an
 * earlier request keeps under the key (then the write must not be made).
 */
export async function claimKey(query: Query, keep: AnyKeepAnswer): Promise<KeptAnswer | undefined> {
  const { rows } = await query(CLAIM, [keep.owner, keep.key, keep.fingerprint, keep.ttlMs]);
  if (rows.length === 1) return undefined;
  const found = await query<KeptRow>(FIND, [keep.owner, keep.key]);
  // Claimed by a transaction that committed, so found: unless it expired in between (then claim again).
  return found.rows[0] ? kept(found.rows[0]) : claimKey(query, keep);
}

/** Keeps the answer for what the write did in the claimed row (the same transaction). */
export async function keepAnswer(query: Query, keep: AnyKeepAnswer, outcome: Outcome): Promise<KeptAnswer> {
  const answer = renderAnswer(keep.answers, outcome);
  await query('UPDATE idempotency_keys SET status = $3, headers = $4, body = $5 WHERE owner = $1 AND key = $2', [
    keep.owner,
    keep.key,
    answer.status,
    JSON.stringify(answer.headers),
    answer.body,
  ]);
  return { ...answer, fingerprint: keep.fingerprint, earlier: false };
}
