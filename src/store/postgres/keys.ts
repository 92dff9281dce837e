import { KEY_COLUMNS, keptUnderKey, madeUnder, outcomeText, replayOf, type KeyClaim, type Kept, type KeyRow } from '../idempotency.js';
import type { KeptOutcome, Outcomes, WriteKind } from '../writes.js';
import { named, type Query } from './query.js';

/**
 * How a write claims its key and keeps its outcome on PostgreSQL, in the write's own transaction, for any
 * number of keys at once (a run of keyed puts in the group commit; a single write claims one). A claim
 * inserts the key's row first (or takes over an expired one): a claim of the same key by another
 * transaction, on any instance, waits on the primary key until that one commits, and then finds its
 * outcome, and its write is not made. The write follows, as without a key, then its outcome goes into
 * the row; all of it commits together, or none of it (store/idempotency.ts).
 */

/** The database's clock in epoch ms: expiry must mean the same to every instance, whatever their clocks. */
const NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/**
 * The same, taken once for a statement that looks for a range of expiries: clock_timestamp() is volatile,
 * so compared row by row it is a filter, and the expiry index cannot serve it (a count read the whole
 * table); read once by a subquery, it is a constant the index's range is bounded by.
 */
export const NOW_ONCE = `(SELECT ${NOW_MS})`;

// Claimed in key order: two instances' runs that share keys take their locks in the same order. The
// outcome is NULL only until the claiming transaction keeps it, which nobody else sees.
const CLAIM = named(
  'key_claim',
  `INSERT INTO idempotency_keys AS k (owner, key, fingerprint, kind, outcome, expires_at)
  SELECT owner, key, fingerprint, $4::text, NULL, ${NOW_MS} + ttl
    FROM unnest($1::text[], $2::text[], $3::text[], $5::bigint[]) AS i (owner, key, fingerprint, ttl) ORDER BY owner, key
  ON CONFLICT (owner, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, kind = EXCLUDED.kind, outcome = NULL, expires_at = EXCLUDED.expires_at
    WHERE k.expires_at <= ${NOW_MS}
  RETURNING k.owner, k.key`,
);

/** The unexpired outcomes under owners' keys: the one look (a single key is an array of one). */
export const FIND = named(
  'key_find',
  `SELECT k.owner, k.key, ${KEY_COLUMNS} FROM idempotency_keys k
  JOIN unnest($1::text[], $2::text[]) AS i (owner, key) ON k.owner = i.owner AND k.key = i.key WHERE k.expires_at > ${NOW_MS}`,
);

const KEEP = named(
  'key_keep',
  `UPDATE idempotency_keys k SET outcome = a.outcome FROM unnest($1::text[], $2::text[], $3::text[]) AS a (owner, key, outcome)
  WHERE k.owner = a.owner AND k.key = a.key`,
);

/** A claim given up in its own transaction: its write did nothing and keeps nothing (keptUnderKey). */
const UNCLAIM = named('key_unclaim', 'DELETE FROM idempotency_keys WHERE owner = $1 AND key = $2 AND outcome IS NULL');

const id = (owner: string, key: string) => `${owner}\u0000${key}`;

/**
 * Claims the keys (distinct) for this transaction's writes of one kind: for each, undefined when its write
 * is to be made, or the outcome an earlier request keeps under it (then its write must not be made).
 */
export async function claimKeys(query: Query, claims: readonly KeyClaim[], kind: WriteKind): Promise<Array<Kept | undefined>> {
  const { rows } = await query<{ owner: string; key: string }>(CLAIM, [
    claims.map((c) => c.owner),
    claims.map((c) => c.key),
    claims.map((c) => c.fingerprint),
    kind,
    claims.map((c) => c.ttlMs),
  ]);
  const found: Array<Kept | undefined> = claims.map(() => undefined);
  if (rows.length === claims.length) return found;
  const mine = new Set(rows.map((row) => id(row.owner, row.key)));
  const others = claims.filter((c) => !mine.has(id(c.owner, c.key)));
  const { rows: kept } = await query<KeyRow & { owner: string; key: string }>(FIND, [others.map((c) => c.owner), others.map((c) => c.key)]);
  const byKey = new Map(kept.map((row) => [id(row.owner, row.key), row]));
  for (const [i, claim] of claims.entries()) {
    if (mine.has(id(claim.owner, claim.key))) continue;
    const row = byKey.get(id(claim.owner, claim.key));
    // Not found: claimed by a transaction that committed, it expired since; claimed alone, then (rare).
    found[i] = row ? replayOf(row) : (await claimKeys(query, [claim], kind))[0];
  }
  return found;
}

/** Keeps the outcomes of the writes made in the rows their keys' claims made (the same transaction). */
export async function keepOutcomes(query: Query, claims: readonly KeyClaim[], outcomes: ReadonlyArray<Outcomes[WriteKind]>): Promise<void> {
  await query(KEEP, [claims.map((c) => c.owner), claims.map((c) => c.key), outcomes.map(outcomeText)]);
}

/** One write under its key, in the caller's transaction: claimed, made (unless the key has an outcome), its outcome kept. */
export async function underKey<K extends WriteKind>(
  query: Query,
  claim: KeyClaim,
  kind: K,
  write: () => Promise<Outcomes[K]>,
): Promise<KeptOutcome<K>> {
  const [earlier] = await claimKeys(query, [claim], kind);
  // An earlier outcome is of the same request (else the caller refuses it): of this kind, or an earlier release's answer.
  if (earlier) return earlier as KeptOutcome<K>;
  const outcome = await write();
  if (keptUnderKey(outcome)) await keepOutcomes(query, [claim], [outcome]);
  else await query(UNCLAIM, [claim.owner, claim.key]);
  return madeUnder(claim, kind, outcome);
}
