import type { Kept, KeyClaim } from '../idempotency.js';
import type { DeleteResult, IfMatch, IfNoneMatch, PatchResult, PlantChanges, PutResult } from '../store.js';
import type { PlantId } from '../../model/plant-id.js';
import type { StoredPlant } from '../../model/plant.js';
import { COMMIT_CTE, eventsCte, keyCte, type FeedContext } from './feed.js';

/**
 * What the plant write statements on PostgreSQL share (plant-writes.ts, conditional-writes.ts): the writes
 * as the group commit takes them, what a statement did, and the parts of their SQL: the queued messages'
 * count, the traceparent parameter, a single write's event.
 */

export type PlantWrite =
  /** With a `claim` on an Idempotency-Key, made by keyed-puts.ts: its outcome is kept in the same transaction and is its result. */
  | {
      kind: 'put';
      plant: StoredPlant;
      createOnly: boolean;
      ifMatch: IfMatch | undefined;
      ifNoneMatch?: IfNoneMatch | undefined;
      claim?: KeyClaim | undefined;
    }
  | { kind: 'patch'; id: PlantId; changes: PlantChanges; ifMatch: IfMatch | undefined; ifNoneMatch?: IfNoneMatch | undefined }
  | { kind: 'delete'; id: PlantId; ifMatch: IfMatch | undefined; ifNoneMatch?: IfNoneMatch | undefined };

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

export interface Counts {
  queued: number;
  event_key: string;
}

/** Counts the messages of a write's outbox CTE (named q) queued for delivery. */
export const QUEUED = `(SELECT count(*) FROM q WHERE status = 'pending')::int AS queued`;
/** No traceparent (tracing off): NULL in the SQL, no parameter. */
const NO_TRACE: { sql: undefined; values: readonly string[] } = { sql: undefined, values: [] };

/** The traceparent as the statement's parameter number `n`, when there is one: its SQL and the parameters to append. */
export function traceParam(n: number, traceparent: string | undefined): { sql: string | undefined; values: readonly string[] } {
  return traceparent === undefined ? NO_TRACE : { sql: `$${n}`, values: [traceparent] };
}

/**
 * The CTEs after a single write's (named w, one row when it changed a plant): its event, as the
 * transaction's next, and the commit number when the statement is its own transaction. The statement
 * passes the key as `$keyParam` and the base as `$keyParam + 1`; `id`, `type` and `body` are SQL.
 */
export function singleEvent(feed: FeedContext, keyParam: number, event: { id: string; type: string; body: string }): string {
  const ev = eventsCte({ from: 'w', ord: `$${keyParam + 1}::int + 1`, ...event });
  return `${keyCte(keyParam)}, ${ev}${feed.commits ? `, ${COMMIT_CTE}` : ''}`;
}

export function applied(result: PlantWriteResult, changed: boolean, row: Counts): Applied {
  return { results: [result], queued: row.queued, events: changed ? 1 : 0, eventKey: row.event_key };
}
