import type { EventType } from '../../model/events.js';
import { FEED_START, FEED_START_ID, type EventStore, type FeedEvent, type FeedPage, type FeedPosition, type FeedRead } from '../event-store.js';
import { named, type Query } from './query.js';

/**
 * The change feed on PostgreSQL. Instances commit concurrently, so the order in which events are
 * inserted is not the order in which they become visible: a reader that resumed after an event could
 * miss an earlier-numbered one that committed later. So an event is inserted with its transaction's key
 * (a sequence value, from `k` below) and its place among that transaction's events, and the transaction
 * ends by taking a commit number under an advisory lock that it holds until it has committed (`cm`
 * below, or COMMIT_STATEMENT). The next transaction can take the next number only once the holder has
 * committed and become visible, so numbers are handed out in commit order: a reader that sees commit n
 * sees every commit before it, and reads (commit number, place) in order, with no gap.
 *
 * The lock is taken last, after every row lock of the transaction, so it never waits in a cycle; it is
 * held only for the commit itself (the statement's end, or one round trip and COMMIT), which is the
 * whole cost on the write path: commits that record events are serialised there, while everything
 * before them still runs concurrently.
 */

/** The key of pg_advisory_xact_lock that orders commits (another than the migrations' lock). */
const COMMIT_LOCK = '7031642925113513';
const NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

/** How a statement records its transaction's events. */
export interface FeedContext {
  /** The key an earlier statement of the transaction took, or null: take one. */
  key: string | null;
  /** Events the transaction recorded before this statement (their places are 1..base). */
  base: number;
  /** The statement is its whole transaction: it takes the commit number itself (COMMIT_CTE). */
  commits: boolean;
}

/** A statement alone, as its own transaction. */
export const ALONE: FeedContext = { key: null, base: 0, commits: true };

/** CTE `k`: the key of the transaction's events, `$n` when an earlier statement took one. Evaluated once. */
export function keyCte(param: number): string {
  return `k AS MATERIALIZED (SELECT COALESCE($${param}::bigint, nextval('event_txn')) AS key)`;
}

/** The output column that hands the key to the transaction's next statements. */
export const KEY_COLUMN = '(SELECT key FROM k)::text AS event_key';

/** CTE `ev`: one event per row of `from`, its place given by `ord` (SQL expressions on those rows). */
export function eventsCte(e: { from: string; ord: string; id: string; type: string; body: string }): string {
  return `ev AS (INSERT INTO events (key, ord, id, type, body) SELECT (SELECT key FROM k), ${e.ord}, ${e.id}, ${e.type}, ${e.body} FROM ${e.from} RETURNING 1)`;
}

/**
 * CTE `cm`, for a statement that is its own transaction: once `ev` (and with it every row the statement
 * writes, and so every row lock) is done, and only if it recorded events, takes the commit lock and the
 * next commit number. Both subqueries hold volatile functions, so they are not merged: the count first,
 * then the lock, then the number.
 */
export const COMMIT_CTE = `cm AS (INSERT INTO event_commits (csn, key, at)
  SELECT nextval('event_commit_order'), l.key, ${NOW_MS}
  FROM (SELECT pg_advisory_xact_lock(${COMMIT_LOCK}), key FROM k WHERE (SELECT count(*) FROM ev) > 0) l)`;

/** The last statement of a transaction that recorded events under the key $1: its commit number, taken under the lock. */
export const COMMIT_STATEMENT = named(
  'event_commit',
  `INSERT INTO event_commits (csn, key, at)
   SELECT nextval('event_commit_order'), $1::bigint, ${NOW_MS} FROM (SELECT pg_advisory_xact_lock(${COMMIT_LOCK})) l`,
);

interface EventRow {
  commit: string;
  ord: number;
  id: string;
  type: EventType;
  body: string;
}

/**
 * Events after ($1, $2), commit by commit: the commits in order, and in each its events after the cursor's
 * place (for the cursor's own commit) in order. Each commit's events are read by the primary key (key,
 * ord), so a commit of a million events (an import) is read a page at a time like any other.
 */
function readSql(typed: boolean): string {
  return `SELECT c.csn::text AS commit, e.ord, e.id, e.type, e.body
    FROM event_commits c CROSS JOIN LATERAL (
      SELECT ord, id, type, body FROM events
      WHERE key = c.key AND ord > CASE WHEN c.csn = $1::bigint THEN $2::int ELSE 0 END${typed ? ' AND type = ANY ($4::text[])' : ''}
      ORDER BY ord LIMIT $3) e
    WHERE c.csn >= $1::bigint
    ORDER BY c.csn, e.ord LIMIT $3`;
}

const READ = named('events_read', readSql(false));
const READ_TYPED = named('events_read_typed', readSql(true));
const FIND = named('events_find', 'SELECT c.csn::text AS commit, e.ord FROM events e JOIN event_commits c ON c.key = e.key WHERE e.id = $1');
const NEWEST = `SELECT c.csn::text AS commit, e.ord, e.id, e.type, e.body
  FROM (SELECT csn, key FROM event_commits ORDER BY csn DESC LIMIT 1) c
  CROSS JOIN LATERAL (SELECT ord, id, type, body FROM events WHERE key = c.key ORDER BY ord DESC LIMIT 1) e`;

/**
 * Expired commits are deleted this many at a time (with their events), the oldest first, never the newest;
 * and only the run of them before the first one kept, so that the feed never has a hole a reader whose
 * cursor is still held would skip (`at` is taken from the clock, which may be set back).
 */
const EXPIRE_CHUNK = 1000;
const EXPIRE = `WITH f AS (SELECT csn, at FROM event_commits ORDER BY csn LIMIT $2),
  old AS (
    SELECT csn FROM f WHERE csn < coalesce(
      (SELECT min(csn) FROM f WHERE at >= $1 OR csn >= (SELECT max(csn) FROM event_commits)),
      (SELECT max(csn) + 1 FROM f))),
  gone AS (DELETE FROM event_commits WHERE csn IN (SELECT csn FROM old) RETURNING key),
  ev AS (DELETE FROM events WHERE key IN (SELECT key FROM gone) RETURNING 1)
  SELECT (SELECT count(*) FROM gone)::int AS commits, (SELECT count(*) FROM ev)::int AS events`;

function toEvent(row: EventRow): FeedEvent {
  return { position: { commit: Number(row.commit), index: row.ord }, id: row.id, type: row.type, body: row.body };
}

/** The change feed's reads on PostgreSQL, from the primary (a replica's lag would only delay them). */
export class PostgresEvents implements EventStore {
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly query: Query) {}

  async read({ after, limit, types }: FeedRead): Promise<FeedEvent[]> {
    const { rows } =
      types === undefined
        ? await this.query<EventRow>(READ, [String(after.commit), after.index, limit])
        : await this.query<EventRow>(READ_TYPED, [String(after.commit), after.index, limit, types]);
    return rows.map(toEvent);
  }

  /** Whole pages: PostgreSQL reads off the event loop, each statement within DB_TIMEOUT_MS (statement_timeout). */
  async page(options: FeedRead): Promise<FeedPage> {
    return { events: await this.read(options) };
  }

  async find(id: string): Promise<FeedPosition | undefined> {
    if (id === FEED_START_ID) {
      // Commit numbers count from 1 and retention deletes the oldest first: the first is there until something was
      // deleted (or, rarely, a transaction that took number 1 failed to commit: then this answers gone, to be safe).
      const { rows } = await this.query<{ oldest: string | null }>('SELECT min(csn)::text AS oldest FROM event_commits', []);
      return rows[0]!.oldest === null || rows[0]!.oldest === '1' ? FEED_START : undefined;
    }
    const { rows } = await this.query<{ commit: string; ord: number }>(FIND, [id]);
    const row = rows[0];
    return row && { commit: Number(row.commit), index: row.ord };
  }

  async holds(after: FeedPosition): Promise<boolean> {
    // Commit numbers count from 1, and retention deletes only the oldest run of commits, each whole.
    const { rows } = await this.query<{ oldest: string | null }>('SELECT min(csn)::text AS oldest FROM event_commits', []);
    const oldest = rows[0]!.oldest;
    return oldest === null || Number(oldest) <= Math.max(after.commit, 1);
  }

  async newest(): Promise<FeedEvent | undefined> {
    const { rows } = await this.query<EventRow>(NEWEST, []);
    return rows[0] && toEvent(rows[0]);
  }

  async deleteExpired(before: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      const { rows } = await this.query<{ commits: number; events: number }>(EXPIRE, [before, EXPIRE_CHUNK]);
      deleted += rows[0]!.events;
      if (rows[0]!.commits < EXPIRE_CHUNK) return deleted;
    }
  }

  onRecorded(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Told by the writes after each commit that recorded events. */
  readonly recorded = (): void => {
    for (const listener of this.listeners) listener();
  };
}
