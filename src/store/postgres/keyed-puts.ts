import { madeUnder, type Kept, type KeyClaim } from '../idempotency.js';
import type { PutResult } from '../store.js';
import type { FeedContext } from './feed.js';
import { claimKeys, keepOutcomes } from './keys.js';
import { applyOne, applyPlainPuts, isUnconditionalPut } from './plant-writes.js';
import type { Applied, PlantWrite, PlantWriteResult } from './plant-write-sql.js';
import type { Query } from './query.js';

/**
 * Puts under Idempotency-Keys in the group commit's transaction: a run of unconditional ones (distinct ids
 * and distinct keys), or one conditional put. One statement claims every key (postgres/keys.ts), one finds
 * the outcomes of the keys answered already (only when some were), the puts of the keys claimed are made
 * as without a key (one multi-row upsert, or the conditional put's statement: postgres/plant-writes.ts),
 * and one statement keeps their outcomes: four statements for a run, where one put takes three.
 */

/** A put under a key, as the group commit has it. */
export type KeyedPut = Extract<PlantWrite, { kind: 'put' }> & { claim: KeyClaim };

export function isKeyedPut(write: PlantWrite): write is KeyedPut {
  return write.kind === 'put' && write.claim !== undefined;
}

/** An unconditional put under a key: such puts go in runs. */
export function isKeyedRunPut(write: PlantWrite): write is KeyedPut {
  return isKeyedPut(write) && isUnconditionalPut(write);
}

/**
 * The puts, each made only when its key was claimed; each result is its outcome, or the one its key had
 * already. `traces`: each put's request's traceparent (tracing on).
 */
export async function applyKeyedPuts(
  query: Query,
  puts: readonly KeyedPut[],
  feed: FeedContext,
  traces?: ReadonlyArray<string | null>,
): Promise<Applied> {
  const found = await claimKeys(
    query,
    puts.map((put) => put.claim),
    'put',
  );
  const results: Array<PlantWriteResult | Kept | undefined> = found;
  const made = puts.flatMap((put, i) => (found[i] === undefined ? [{ put, i }] : []));
  if (made.length === 0) return { results: results as PlantWriteResult[], queued: 0, events: 0, eventKey: feed.key };
  // A conditional put comes alone (group-commit.ts): made by its own statement.
  const conditional = made.length === 1 && !isUnconditionalPut(made[0]!.put) ? made[0] : undefined;
  const done = conditional
    ? await applyOne(query, { ...conditional.put, claim: undefined }, feed, traces?.[conditional.i] ?? undefined)
    : await applyPlainPuts(
        query,
        made.map(({ put }) => put.plant),
        feed,
        traces && made.map(({ i }) => traces[i] ?? null),
      );
  // A put's result is its outcome (store/writes.ts).
  const outcomes = done.results as PutResult[];
  await keepOutcomes(
    query,
    made.map(({ put }) => put.claim),
    outcomes,
  );
  made.forEach(({ put, i }, j) => (results[i] = madeUnder(put.claim, 'put', outcomes[j]!)));
  return { ...done, results: results as PlantWriteResult[] };
}
