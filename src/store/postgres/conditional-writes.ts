import { toPlant } from '../rows.js';
import { newEventId } from '../../model/events.js';
import type { PlantId } from '../../model/plant-id.js';
import type { StoredPlant } from '../../model/plant.js';
import { KEY_COLUMN, type FeedContext } from './feed.js';
import { bodyFor, insertMessages } from './outbox.js';
import { int8, type Query } from './query.js';
import type { DeleteResult, IfMatch, IfNoneMatch, PutResult, WriteRefusal } from '../store.js';
import { applied, QUEUED, singleEvent, traceParam, type Applied, type Counts, type PlantWrite } from './plant-write-sql.js';

/**
 * The plant writes on PostgreSQL that a condition may refuse (If-Match, If-None-Match), each one statement
 * whose WHERE is the condition, so that the database settles a race between instances: a conditional put,
 * a patch and a delete.
 */

/** If-Match as SQL: `version = ANY($n)`, true for `*` (a NULL array); the row must exist either way. */
const MATCHES = (n: number) => `($${n}::bigint[] IS NULL OR version = ANY ($${n}::bigint[]))`;
const ifMatchParam = (ifMatch: IfMatch | undefined) => (ifMatch === undefined || ifMatch === '*' ? null : ifMatch.map(String));
/** If-None-Match's versions as SQL: not one of them, true for none given (a NULL array). */
const MATCHES_NONE = (n: number) => `($${n}::bigint[] IS NULL OR version <> ALL ($${n}::bigint[]))`;
const ifNoneMatchParam = (ifNoneMatch: IfNoneMatch | undefined) => (ifNoneMatch === undefined ? null : ifNoneMatch.map(String));

/**
 * Why a patch or delete changed nothing: If-Match failed (a missing plant fails it too), or If-None-Match
 * named the version of a plant that exists (read after the write found nothing), or there is no plant.
 */
async function refusal(query: Query, id: PlantId, ifMatch: IfMatch | undefined, ifNoneMatch: IfNoneMatch | undefined): Promise<WriteRefusal> {
  if (ifMatch !== undefined) return 'precondition-failed';
  if (ifNoneMatch === undefined) return 'not-found';
  const { rows } = await query<{ found: boolean }>('SELECT EXISTS (SELECT 1 FROM plants WHERE id = $1::bigint) AS found', [int8(id)]);
  return rows[0]!.found ? 'precondition-failed' : 'not-found';
}

export async function applyConditionalPut(
  query: Query,
  { plant, createOnly, ifMatch, ifNoneMatch }: Extract<PlantWrite, { kind: 'put' }>,
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
    // Only a plant that exists, at a version the client named (and at none If-None-Match named), is replaced.
    const trace = traceParam(11, traceparent);
    const { rows } = await query<Counts & { version: string | null }>(
      `WITH w AS (UPDATE plants SET name = $2, tag = $3, version = nextval('plant_version')
                  WHERE id = $1::bigint AND ${MATCHES(7)} AND ${MATCHES_NONE(8)} RETURNING version),
            q AS (${insertMessages({ type: "'plant.updated'", payload: '$6', eventId: '$4', at: '$5::bigint', from: 'w', traceparent: trace.sql })}),
            ${singleEvent(feed, 9, { id: '$4', type: "'plant.updated'", body: '$6' })}
       SELECT (SELECT version::text FROM w) AS version, ${QUEUED}, ${KEY_COLUMN}`,
      [...values, bodyFor('plant.updated', plant, at), ifMatchParam(ifMatch), ifNoneMatchParam(ifNoneMatch), feed.key, feed.base, ...trace.values],
    );
    const row = rows[0]!;
    const result: PutResult = row.version === null ? { outcome: 'precondition-failed' } : { outcome: 'replaced', version: Number(row.version) };
    return applied(result, row.version !== null, row);
  }
  if (ifNoneMatch !== undefined && !createOnly) return applyPutUnlessAt(query, plant, ifNoneMatch, feed, traceparent);
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

/**
 * A put with If-None-Match naming versions: creates the plant, or replaces it unless it is at one of them
 * (the upsert's WHERE leaves such a row as it is, and returns nothing).
 */
async function applyPutUnlessAt(
  query: Query,
  plant: StoredPlant,
  ifNoneMatch: IfNoneMatch,
  feed: FeedContext,
  traceparent: string | undefined,
): Promise<Applied> {
  const at = Date.now();
  const trace = traceParam(11, traceparent);
  const type = "CASE WHEN w.inserted THEN 'plant.created' ELSE 'plant.updated' END";
  const body = 'CASE WHEN w.inserted THEN $6 ELSE $7 END';
  const { rows } = await query<Counts & { version: string | null; inserted: boolean | null }>(
    `WITH w AS (INSERT INTO plants AS p (id, name, tag, version) VALUES ($1::bigint, $2, $3, nextval('plant_version'))
                ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag, version = EXCLUDED.version
                WHERE p.version <> ALL ($8::bigint[])
                RETURNING p.version, (p.xmax = 0) AS inserted),
          q AS (${insertMessages({ type, payload: body, eventId: '$4', at: '$5::bigint', from: 'w', traceparent: trace.sql })}),
          ${singleEvent(feed, 9, { id: '$4', type, body })}
     SELECT (SELECT version::text FROM w) AS version, (SELECT inserted FROM w) AS inserted, ${QUEUED}, ${KEY_COLUMN}`,
    [
      int8(plant.id),
      plant.name,
      plant.tag ?? null,
      newEventId(),
      at,
      bodyFor('plant.created', plant, at),
      bodyFor('plant.updated', plant, at),
      ifNoneMatchParam(ifNoneMatch),
      feed.key,
      feed.base,
      ...trace.values,
    ],
  );
  const row = rows[0]!;
  const result: PutResult =
    row.version === null
      ? { outcome: 'precondition-failed' }
      : { outcome: row.inserted === true ? 'created' : 'replaced', version: Number(row.version) };
  return applied(result, row.version !== null, row);
}

/** Two statements: run inside a transaction (the batch's). */
export async function applyPatch(
  query: Query,
  { id, changes, ifMatch, ifNoneMatch }: Extract<PlantWrite, { kind: 'patch' }>,
  feed: FeedContext,
  traceparent: string | undefined,
): Promise<Applied> {
  // One UPDATE reads and writes the row under its lock: concurrent patches never lose a field.
  const { rows } = await query<{ id: string; name: string; tag: string | null; version: string }>(
    `UPDATE plants SET name = COALESCE($2::text, name), tag = CASE WHEN $3::boolean THEN $4::text ELSE tag END, version = nextval('plant_version')
     WHERE id = $1::bigint AND ${MATCHES(5)} AND ${MATCHES_NONE(6)} RETURNING id::text AS id, name, tag, version::text AS version`,
    [int8(id), changes.name ?? null, changes.tag !== undefined, changes.tag ?? null, ifMatchParam(ifMatch), ifNoneMatchParam(ifNoneMatch)],
  );
  const row = rows[0];
  if (!row) return { results: [await refusal(query, id, ifMatch, ifNoneMatch)], queued: 0, events: 0, eventKey: feed.key };
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

export async function applyDelete(
  query: Query,
  { id, ifMatch, ifNoneMatch }: Extract<PlantWrite, { kind: 'delete' }>,
  feed: FeedContext,
  traceparent: string | undefined,
): Promise<Applied> {
  const at = Date.now();
  const trace = traceParam(9, traceparent);
  const { rows } = await query<Counts & { deleted: number }>(
    `WITH w AS (DELETE FROM plants WHERE id = $1::bigint AND ${MATCHES(5)} AND ${MATCHES_NONE(6)} RETURNING 1),
          q AS (${insertMessages({ type: "'plant.deleted'", payload: '$4', eventId: '$2', at: '$3::bigint', from: 'w', traceparent: trace.sql })}),
          ${singleEvent(feed, 7, { id: '$2', type: "'plant.deleted'", body: '$4' })}
     SELECT (SELECT count(*) FROM w)::int AS deleted, ${QUEUED}, ${KEY_COLUMN}`,
    [
      int8(id),
      newEventId(),
      at,
      bodyFor('plant.deleted', { id }, at),
      ifMatchParam(ifMatch),
      ifNoneMatchParam(ifNoneMatch),
      feed.key,
      feed.base,
      ...trace.values,
    ],
  );
  const row = rows[0]!;
  const result: DeleteResult = row.deleted === 1 ? 'deleted' : await refusal(query, id, ifMatch, ifNoneMatch);
  return applied(result, row.deleted === 1, row);
}
