import type { StoredPlant } from '../../model/plant.js';
import { outcomeOf, parseHeaders, renderAnswer, type KeepAnswer, type KeptAnswer } from '../idempotency.js';
import type { PutResult } from '../store.js';
import type { FeedContext } from './feed.js';
import { claimKey, NOW_MS } from './kept-answers.js';
import { applyPlainPuts, type Applied, type PlantWrite } from './plant-writes.js';
import type { Query } from './query.js';

/**
 * Plain puts under Idempotency-Keys, many at once (the group commit's runs of them, distinct ids and
 * distinct keys, inside its transaction): one statement claims every key, one finds the answers of the
 * keys already answered, one multi-row upsert makes the puts of the others (postgres/plant-writes.ts),
 * one statement keeps their answers. Four statements for the run, where one keyed put alone takes three.
 */

/** A put without a condition, under a key: such puts go in runs. */
export function isKeptPlainPut(write: PlantWrite): write is Extract<PlantWrite, { kind: 'put' }> & { keep: KeepAnswer<'put'> } {
  return write.kind === 'put' && write.keep !== undefined && !write.createOnly && write.ifMatch === undefined;
}

// Claimed in key order: two instances' runs that share keys take their locks in the same order.
const CLAIM_MANY = `INSERT INTO idempotency_keys AS k (owner, key, fingerprint, status, headers, body, expires_at)
  SELECT owner, key, fingerprint, 0, '{}', '', ${NOW_MS} + ttl
    FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS i (owner, key, fingerprint, ttl) ORDER BY owner, key
  ON CONFLICT (owner, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, status = 0, headers = '{}', body = '', expires_at = EXCLUDED.expires_at
    WHERE k.expires_at <= ${NOW_MS}
  RETURNING k.owner, k.key`;

const FIND_MANY = `SELECT k.owner, k.key, k.fingerprint, k.status, k.headers, k.body FROM idempotency_keys k
  JOIN unnest($1::text[], $2::text[]) AS i (owner, key) ON k.owner = i.owner AND k.key = i.key WHERE k.expires_at > ${NOW_MS}`;

const KEEP_MANY = `UPDATE idempotency_keys k SET status = a.status, headers = a.headers, body = a.body
  FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[]) AS a (owner, key, status, headers, body)
  WHERE k.owner = a.owner AND k.key = a.key`;

interface KeptRow {
  owner: string;
  key: string;
  fingerprint: string;
  status: number;
  headers: string;
  body: string;
}

const id = (owner: string, key: string) => `${owner}\u0000${key}`;

/**
 * The run's puts, each made only when its key was claimed; each result is the answer kept with it, or
 * the answer its key had already. `traces`: each put's request's traceparent (tracing on).
 */
export async function applyKeptPlainPuts(
  query: Query,
  writes: ReadonlyArray<{ plant: StoredPlant; keep: KeepAnswer<'put'> }>,
  feed: FeedContext,
  traces?: ReadonlyArray<string | null>,
): Promise<Applied> {
  const keeps = writes.map((w) => w.keep);
  const { rows: claimed } = await query<{ owner: string; key: string }>(CLAIM_MANY, [
    keeps.map((k) => k.owner),
    keeps.map((k) => k.key),
    keeps.map((k) => k.fingerprint),
    keeps.map((k) => k.ttlMs),
  ]);
  const mine = new Set(claimed.map((row) => id(row.owner, row.key)));
  const results: Array<KeptAnswer | undefined> = writes.map(() => undefined);
  const others = keeps.filter((k) => !mine.has(id(k.owner, k.key)));
  if (others.length > 0) {
    const { rows } = await query<KeptRow>(FIND_MANY, [others.map((k) => k.owner), others.map((k) => k.key)]);
    const found = new Map(rows.map((row) => [id(row.owner, row.key), row]));
    for (const [i, keep] of keeps.entries()) {
      if (mine.has(id(keep.owner, keep.key))) continue;
      const row = found.get(id(keep.owner, keep.key));
      const earlier = row && { fingerprint: row.fingerprint, status: row.status, headers: parseHeaders(row.headers), body: row.body, earlier: true };
      // Not found: it expired since the claim saw it; claimed alone, then (it is rare).
      results[i] = earlier ?? (await claimKey(query, keep));
      if (results[i] === undefined) mine.add(id(keep.owner, keep.key));
    }
  }
  const made = writes.flatMap((write, i) => (mine.has(id(write.keep.owner, write.keep.key)) ? [{ write, i }] : []));
  if (made.length === 0) return { results: results as KeptAnswer[], queued: 0, events: 0, eventKey: feed.key };
  const done = await applyPlainPuts(
    query,
    made.map(({ write }) => write.plant),
    feed,
    traces && made.map(({ i }) => traces[i] ?? null),
  );
  const answers = made.map(({ write }, j) => renderAnswer(write.keep.answers, outcomeOf.put(done.results[j] as PutResult)));
  await query(KEEP_MANY, [
    made.map(({ write }) => write.keep.owner),
    made.map(({ write }) => write.keep.key),
    answers.map((a) => a.status),
    answers.map((a) => JSON.stringify(a.headers)),
    answers.map((a) => a.body),
  ]);
  made.forEach(({ write, i }, j) => (results[i] = { ...answers[j]!, fingerprint: write.keep.fingerprint, earlier: false }));
  return { ...done, results: results as KeptAnswer[] };
}
