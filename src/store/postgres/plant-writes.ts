import { COMMIT_CTE, eventsCte, KEY_COLUMN, keyCte, type FeedContext } from './feed.js';
import { newEventId } from '../../model/events.js';
import { bodyFor, insertMessages } from './outbox.js';
import { int8, named, type Query } from './query.js';
import type { PutOptions } from '../store.js';
import type { StoredPlant } from '../../model/plant.js';
import type { KeyClaim } from '../idempotency.js';
import { QUEUED, type Applied, type Counts, type PlantWrite } from './plant-write-sql.js';
import { applyConditionalPut, applyDelete, applyPatch } from './conditional-writes.js';

/**
 * The SQL of each plant write on PostgreSQL, run by the group commit (postgres/group-commit.ts). Every race
 * between instances is settled by one statement's atomicity (INSERT ... ON CONFLICT, UPDATE ... WHERE
 * version = ANY (…) RETURNING), and each write's event (the change feed, postgres/feed.ts) and webhook
 * messages are inserted by the same statement (data-modifying CTEs) or, for a patch, the same
 * transaction. Versions come from one sequence. The writes a condition may refuse are conditional-writes.ts's.
 */

/** A put as the group commit takes it (a request's too, under a claim on an Idempotency-Key or without: postgres/writes.ts). */
export function putWrite(plant: StoredPlant, options: PutOptions, claim?: KeyClaim): PlantWrite {
  return { kind: 'put', plant, createOnly: options.createOnly === true, ifMatch: options.ifMatch, ifNoneMatch: options.ifNoneMatch, claim };
}

/** A put without a condition replaces or creates whatever is there: many of them go in one statement. */
export function isUnconditionalPut(write: PlantWrite): write is Extract<PlantWrite, { kind: 'put' }> {
  return write.kind === 'put' && !write.createOnly && write.ifMatch === undefined && write.ifNoneMatch === undefined;
}

/** A plain put: unconditional, without a key. */
export function isPlainPut(write: PlantWrite): write is Extract<PlantWrite, { kind: 'put' }> {
  return isUnconditionalPut(write) && write.claim === undefined;
}

/** A write that takes more than one statement (a patch; a keyed put: its claim, the put, its outcome), so it needs a transaction even alone. */
export function needsTransaction(write: PlantWrite): boolean {
  return write.kind === 'patch' || (write.kind === 'put' && write.claim !== undefined);
}

/**
 * Plain puts of distinct ids, in one statement: a multi-row upsert from arrays. Rows are written in id
 * order, so two instances' batches lock the rows they share in the same order. xmax is 0 on a row
 * version this statement inserted, and the locking transaction's id on one it updated. Events are
 * recorded in the order the puts arrived.
 */
function plainPutsSql(commits: boolean): string {
  return `
WITH input AS (
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[])
    WITH ORDINALITY AS i (id, name, tag, event_id, at, created, updated, traceparent, ord)
), w AS (
  INSERT INTO plants AS p (id, name, tag, version)
  SELECT id, name, tag, nextval('plant_version') FROM input ORDER BY id
  ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag, version = EXCLUDED.version
  RETURNING p.id, p.version, (p.xmax = 0) AS inserted
), m AS (
  SELECT i.ord, w.version, w.inserted, i.event_id, i.at, i.traceparent,
         CASE WHEN w.inserted THEN 'plant.created' ELSE 'plant.updated' END AS type,
         CASE WHEN w.inserted THEN i.created ELSE i.updated END AS payload
  FROM w JOIN input i ON i.id = w.id
), q AS (${insertMessages({ type: 'm.type', payload: 'm.payload', eventId: 'm.event_id', at: 'm.at', from: 'm', traceparent: 'm.traceparent' })}),
${keyCte(9)},
${eventsCte({ from: 'm', ord: '$10::int + m.ord', id: 'm.event_id', type: 'm.type', body: 'm.payload' })}${
    commits
      ? `,
${COMMIT_CTE}`
      : ''
  }
SELECT m.version::text AS version, m.inserted, ${QUEUED}, ${KEY_COLUMN} FROM m ORDER BY m.ord`;
}

const PLAIN_PUTS = named('plant_puts', plainPutsSql(true));
const PLAIN_PUTS_IN_TRANSACTION = named('plant_puts_tx', plainPutsSql(false));

/**
 * Plain puts of distinct ids (isPlainPut), in one statement. `traces`: each put's request's traceparent
 * (tracing on), kept by its messages; without it the array is NULL, which unnest reads as all NULLs.
 */
export async function applyPlainPuts(
  query: Query,
  plants: readonly StoredPlant[],
  feed: FeedContext,
  traces?: ReadonlyArray<string | null>,
): Promise<Applied> {
  const columns = { ids: [] as string[], names: [] as string[], tags: [] as Array<string | null>, events: [] as string[] };
  const ats: number[] = [];
  const created: string[] = [];
  const updated: string[] = [];
  for (const plant of plants) {
    const at = Date.now();
    columns.ids.push(int8(plant.id));
    columns.names.push(plant.name);
    columns.tags.push(plant.tag ?? null);
    columns.events.push(newEventId());
    ats.push(at);
    created.push(bodyFor('plant.created', plant, at));
    updated.push(bodyFor('plant.updated', plant, at));
  }
  const { rows } = await query<Counts & { version: string; inserted: boolean }>(feed.commits ? PLAIN_PUTS : PLAIN_PUTS_IN_TRANSACTION, [
    columns.ids,
    columns.names,
    columns.tags,
    columns.events,
    ats,
    created,
    updated,
    traces ?? null,
    feed.key,
    feed.base,
  ]);
  return {
    results: rows.map((row) => ({ outcome: row.inserted ? 'created' : 'replaced', version: Number(row.version) })),
    queued: rows[0]?.queued ?? 0,
    events: rows.length,
    eventKey: rows[0]?.event_key ?? feed.key,
  };
}

/**
 * Any one write (a patch only inside the caller's transaction). `traceparent`: its request's trace
 * context (tracing on), kept by its messages: then the statement takes it as a parameter of its own.
 */
export function applyOne(query: Query, write: PlantWrite, feed: FeedContext, traceparent?: string): Promise<Applied> {
  switch (write.kind) {
    case 'put':
      // A keyed put comes here without its claim (keyed-puts.ts made it).
      return isUnconditionalPut(write)
        ? applyPlainPuts(query, [write.plant], feed, traceparent === undefined ? undefined : [traceparent])
        : applyConditionalPut(query, write, feed, traceparent);
    case 'patch':
      return applyPatch(query, write, feed, traceparent);
    case 'delete':
      return applyDelete(query, write, feed, traceparent);
  }
}
