import type { PlantId } from '../../model/plant-id.js';
import { toPlant } from '../rows.js';
import { newEventId } from '../../model/events.js';
import { COMMIT_CTE, eventsCte, KEY_COLUMN, keyCte, type FeedContext } from './feed.js';
import { bodyFor, insertMessages } from './outbox.js';
import { int8, named, type Query } from './query.js';
import type { DeleteResult, IfMatch, PatchResult, PlantChanges, PutOptions, PutResult } from '../store.js';
import type { StoredPlant } from '../../model/plant.js';
import type { Kept, KeyClaim } from '../idempotency.js';

/**
 * The SQL of each plant write on PostgreSQL, run by the group commit (postgres/group-commit.ts). Every race
 * between instances is settled by one statement's atomicity (INSERT ... ON CONFLICT, UPDATE ... WHERE
 * version = ANY (…) RETURNING), and each write's event (the change feed, postgres/feed.ts) and webhook
 * messages are inserted by the same statement (data-modifying CTEs) or, for a patch, the same
 * transaction. Versions come from one sequence.
 */

export type PlantWrite =
  /** With a `claim` on an Idempotency-Key, made by keyed-puts.ts: its outcome is kept in the same transaction and is its result. */
  | { kind: 'put'; plant: StoredPlant; createOnly: boolean; ifMatch: IfMatch | undefined; claim?: KeyClaim | undefined }
  | { kind: 'patch'; id: PlantId; changes: PlantChanges; ifMatch: IfMatch | undefined }
  | { kind: 'delete'; id: PlantId; ifMatch: IfMatch | undefined };

export interface PlantWriteResults {
  put: PutResult;
  patch: PatchResult;
  delete: DeleteResult;
}

export type PlantWriteResult = PlantWriteResults[PlantWrite['kind']] | Kept;

/**
 * What a statement did: each write's result, in the order given, how many messages it queued for
 * delivery, how many events it recorded, and the key of its transaction's events (feed.ts).
 */
export interface Applied {
  results: PlantWriteResult[];
  queued: number;
  events: number;
  /** Null when the statement took none (a patch that found no plant). */
  eventKey: string | null;
}

interface Counts {
  queued: number;
  event_key: string;
}

/** A put as the group commit takes it (a request's too, under a claim on an Idempotency-Key or without: postgres/writes.ts). */
export function putWrite(plant: StoredPlant, options: PutOptions, claim?: KeyClaim): PlantWrite {
  return { kind: 'put', plant, createOnly: options.createOnly === true, ifMatch: options.ifMatch, claim };
}

/** A put without a condition replaces or creates whatever is there: many of them go in one statement. */
export function isUnconditionalPut(write: PlantWrite): write is Extract<PlantWrite, { kind: 'put' }> {
  return write.kind === 'put' && !write.createOnly && write.ifMatch === undefined;
}

/** A plain put: unconditional, without a key. */
export function isPlainPut(write: PlantWrite): write is Extract<PlantWrite, { kind: 'put' }> {
  return isUnconditionalPut(write) && write.claim === undefined;
}

/** A write that takes more than one statement (a patch; a keyed put: its claim, the put, its outcome), so it needs a transaction even alone. */
export function needsTransaction(write: PlantWrite): boolean {
  return write.kind === 'patch' || (write.kind === 'put' && write.claim !== undefined);
}

/** Counts the messages of a write's outbox CTE (named q) queued for delivery. */
const QUEUED = `(SELECT count(*) FROM q WHERE status = 'pending')::int AS queued`;

/** If-Match as SQL: `version = ANY($n)`, true for `*` (a NULL array); the row must exist either way. */
const MATCHES = (n: number) => `($${n}::bigint[] IS NULL OR version = ANY ($${n}::bigint[]))`;
const ifMatchParam = (ifMatch: IfMatch | undefined) => (ifMatch === undefined || ifMatch === '*' ? null : ifMatch.map(String));

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

/** No traceparent (tracing off): NULL in the SQL, no parameter. */
const NO_TRACE: { sql: undefined; values: readonly string[] } = { sql: undefined, values: [] };

/** The traceparent as the statement's parameter number `n`, when there is one: its SQL and the parameters to append. */
function traceParam(n: number, traceparent: string | undefined): { sql: string | undefined; values: readonly string[] } {
  return traceparent === undefined ? NO_TRACE : { sql: `$${n}`, values: [traceparent] };
}

/**
 * The CTEs after a single write's (named w, one row when it changed a plant): its event, as the
 * transaction's next, and the commit number when the statement is its own transaction. The statement
 * passes the key as `$keyParam` and the base as `$keyParam + 1`; `id`, `type` and `body` are SQL.
 */
function singleEvent(feed: FeedContext, keyParam: number, event: { id: string; type: string; body: string }): string {
  const ev = eventsCte({ from: 'w', ord: `$${keyParam + 1}::int + 1`, ...event });
  return `${keyCte(keyParam)}, ${ev}${feed.commits ? `, ${COMMIT_CTE}` : ''}`;
}

function applied(result: PlantWriteResult, changed: boolean, row: Counts): Applied {
  return { results: [result], queued: row.queued, events: changed ? 1 : 0, eventKey: row.event_key };
}

async function applyConditionalPut(
  query: Query,
  { plant, createOnly, ifMatch }: Extract<PlantWrite, { kind: 'put' }>,
  feed: FeedContext,
  traceparent: string | undefined,
): Promise<Applied> {
  if (ifMatch !== undefined && createOnly) {
    // Both: If-Match is judged first, then If-None-Match: * refuses the plant it found (RFC 9110 §13.2.2), as on SQLite: never a write.
    const { rows } = await query<{ found: boolean }>(`SELECT EXISTS (SELECT 1 FROM plants WHERE id = $1::bigint AND ${MATCHES(2)}) AS found`, [
      int8(plant.id),
      ifMatchParam(ifMatch),
    ]);
    const refused: PutResult = { outcome: rows[0]!.found ? 'exists' : 'precondition-failed' };
    return { results: [refused], queued: 0, events: 0, eventKey: feed.key };
  }
  const at = Date.now();
  const values = [int8(plant.id), plant.name, plant.tag ?? null, newEventId(), at];
  if (ifMatch !== undefined) {
    // Only a plant that exists, at a version the client named, is replaced.
    const trace = traceParam(10, traceparent);
    const { rows } = await query<Counts & { version: string | null }>(
      `WITH w AS (UPDATE plants SET name = $2, tag = $3, version = nextval('plant_version') WHERE id = $1::bigint AND ${MATCHES(7)} RETURNING version),
            q AS (${insertMessages({ type: "'plant.updated'", payload: '$6', eventId: '$4', at: '$5::bigint', from: 'w', traceparent: trace.sql })}),
            ${singleEvent(feed, 8, { id: '$4', type: "'plant.updated'", body: '$6' })}
       SELECT (SELECT version::text FROM w) AS version, ${QUEUED}, ${KEY_COLUMN}`,
      [...values, bodyFor('plant.updated', plant, at), ifMatchParam(ifMatch), feed.key, feed.base, ...trace.values],
    );
    const row = rows[0]!;
    const result: PutResult = row.version === null ? { outcome: 'precondition-failed' } : { outcome: 'replaced', version: Number(row.version) };
    return applied(result, row.version !== null, row);
  }
  if (!createOnly) throw new Error('a plain put goes through applyPlainPuts');
  const trace = traceParam(9, traceparent);
  const { rows } = await query<Counts & { version: string | null }>(
    `WITH w AS (INSERT INTO plants (id, name, tag, version) VALUES ($1::bigint, $2, $3, nextval('plant_version')) ON CONFLICT (id) DO NOTHING RETURNING version),
          q AS (${insertMessages({ type: "'plant.created'", payload: '$6', eventId: '$4', at: '$5::bigint', from: 'w', traceparent: trace.sql })}),
          ${singleEvent(feed, 7, { id: '$4', type: "'plant.created'", body: '$6' })}
     SELECT (SELECT version::text FROM w) AS version, ${QUEUED}, ${KEY_COLUMN}`,
    [...values, bodyFor('plant.created', plant, at), feed.key, feed.base, ...trace.values],
  );
  const row = rows[0]!;
  return applied(row.version === null ? { outcome: 'exists' } : { outcome: 'created', version: Number(row.version) }, row.version !== null, row);
}

/** Two statements: run inside a transaction (the batch's). */
async function applyPatch(
  query: Query,
  { id, changes, ifMatch }: Extract<PlantWrite, { kind: 'patch' }>,
  feed: FeedContext,
  traceparent: string | undefined,
): Promise<Applied> {
  // One UPDATE reads and writes the row under its lock: concurrent patches never lose a field.
  const { rows } = await query<{ id: string; name: string; tag: string | null; version: string }>(
    `UPDATE plants SET name = COALESCE($2::text, name), tag = CASE WHEN $3::boolean THEN $4::text ELSE tag END, version = nextval('plant_version')
     WHERE id = $1::bigint AND ${MATCHES(5)} RETURNING id::text AS id, name, tag, version::text AS version`,
    [int8(id), changes.name ?? null, changes.tag !== undefined, changes.tag ?? null, ifMatchParam(ifMatch)],
  );
  const row = rows[0];
  if (!row) return { results: [ifMatch === undefined ? 'not-found' : 'precondition-failed'], queued: 0, events: 0, eventKey: feed.key };
  const plant = toPlant(row);
  const at = Date.now();
  const trace = traceParam(6, traceparent);
  const { rows: counts } = await query<Counts>(
    `WITH w AS (SELECT 1),
          q AS (${insertMessages({ type: "'plant.updated'", payload: '$3', eventId: '$1', at: '$2::bigint', from: 'w', traceparent: trace.sql })}),
          ${singleEvent({ ...feed, commits: false }, 4, { id: '$1', type: "'plant.updated'", body: '$3' })}
     SELECT ${QUEUED}, ${KEY_COLUMN}`,
    [newEventId(), at, bodyFor('plant.updated', plant, at), feed.key, feed.base, ...trace.values],
  );
  return applied({ plant, version: Number(row.version) }, true, counts[0]!);
}

async function applyDelete(
  query: Query,
  { id, ifMatch }: Extract<PlantWrite, { kind: 'delete' }>,
  feed: FeedContext,
  traceparent: string | undefined,
): Promise<Applied> {
  const at = Date.now();
  const trace = traceParam(8, traceparent);
  const { rows } = await query<Counts & { deleted: number }>(
    `WITH w AS (DELETE FROM plants WHERE id = $1::bigint AND ${MATCHES(5)} RETURNING 1),
          q AS (${insertMessages({ type: "'plant.deleted'", payload: '$4', eventId: '$2', at: '$3::bigint', from: 'w', traceparent: trace.sql })}),
          ${singleEvent(feed, 6, { id: '$2', type: "'plant.deleted'", body: '$4' })}
     SELECT (SELECT count(*) FROM w)::int AS deleted, ${QUEUED}, ${KEY_COLUMN}`,
    [int8(id), newEventId(), at, bodyFor('plant.deleted', { id }, at), ifMatchParam(ifMatch), feed.key, feed.base, ...trace.values],
  );
  const row = rows[0]!;
  const result: DeleteResult = row.deleted === 1 ? 'deleted' : ifMatch === undefined ? 'not-found' : 'precondition-failed';
  return applied(result, row.deleted === 1, row);
}
