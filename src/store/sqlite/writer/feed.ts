import { eventBody, newEventId, type EventType, type PlantChange } from '../../../model/events.js';
import { prepare, type Connection } from '../connection.js';
import type { WriteOf, WriteResults } from './protocol.js';

/** A change as the feed recorded it: the event's id and body, which its webhook messages carry too. */
export interface RecordedEvent {
  type: EventType;
  id: string;
  body: string;
  /** With tracing on, the W3C traceparent of the request that made the change (kept with its messages). */
  traceparent: string | null;
}

type Ops = { [K in 'deleteExpiredEvents']: (op: WriteOf<K>) => WriteResults[K] };

/**
 * The change feed in the SQLite writer thread: one events row per change, in the batch's transaction, in
 * the order the changes were made. The writer is the only one, so rows are numbered in commit order.
 */
export function sqliteEventWrites(db: Connection): { record(changes: readonly PlantChange[], now: number): RecordedEvent[]; ops: Ops } {
  const insert = prepare<[string, string, number, string]>(db, 'INSERT INTO events (id, type, at, body) VALUES (?, ?, ?, ?)');
  // The oldest rows first, a chunk at a time, never the newest row (its position must never be handed out
  // again), nor one the search index has not read yet (it names a plant to index: writer/search-index.ts).
  // Only the run of rows before the first one kept: `at` is each writer's clock, and with several worker
  // processes a row may be older than the one before it; deleting it alone would leave a hole in the feed
  // that a reader whose cursor is still held would skip.
  const expire = prepare<[number, number]>(
    db,
    `WITH chunk AS (SELECT position, at FROM events ORDER BY position LIMIT ?)
     DELETE FROM events WHERE position < coalesce(
       (SELECT min(position) FROM chunk
          WHERE at >= ? OR position >= (SELECT max(position) FROM events)
             OR position > (SELECT value FROM counters WHERE name = 'search_position')),
       (SELECT max(position) + 1 FROM chunk))`,
  );
  return {
    record(changes, now) {
      const timestamp = new Date(now);
      return changes.map((change) => {
        const id = newEventId();
        const body = eventBody(change, timestamp);
        insert.run(id, change.type, now, body);
        return { type: change.type, id, body, traceparent: change.traceparent ?? null };
      });
    },
    ops: {
      deleteExpiredEvents({ before, limit }) {
        return expire.run(limit, before).changes;
      },
    },
  };
}
