import type { EventType } from '../../model/events.js';
import { FEED_START, FEED_START_ID, type EventStore, type FeedEvent, type FeedPage, type FeedPosition, type FeedRead } from '../event-store.js';
import { prepare, type Connection } from './connection.js';
import { guard } from './errors.js';
import type { WriteThread } from './writer/thread.js';

interface EventRow {
  position: number;
  id: string;
  type: EventType;
  body: string;
}

const COLUMNS = 'SELECT position, id, type, body FROM events';
/** Expired events are deleted this many at a time, each chunk a write of its own, so that other writes go on between chunks. */
const EXPIRE_CHUNK = 10_000;

/**
 * Events a page of some types examines at most (there is no index on type): a type few events have would
 * otherwise read every event after the cursor in one statement on the event loop (0.1-0.2 s over 640,000).
 * About 25 ms of reading; the page then ends early and the next one starts after the last event examined.
 */
export const EVENT_SCAN_WINDOW = 100_000;

function toEvent(row: EventRow): FeedEvent {
  return { position: { commit: row.position, index: 0 }, id: row.id, type: row.type, body: row.body };
}

/**
 * The change feed on SQLite: read on the main thread's connection (WAL: every committed batch, whole),
 * recorded by the writer thread (writer/feed.ts). A position is a row's: one number, in commit order.
 */
export class SqliteEvents implements EventStore {
  constructor(
    private readonly db: Connection,
    private readonly writer: WriteThread,
    /** EVENT_SCAN_WINDOW; smaller in tests. */
    private readonly scanWindow = EVENT_SCAN_WINDOW,
  ) {}

  read({ after, limit, types }: FeedRead): Promise<FeedEvent[]> {
    return guard(() => {
      // One statement per number of types (at most three), each prepared once.
      const filter = types === undefined ? '' : ` AND type IN (${types.map(() => '?').join(', ')})`;
      const statement = prepare<unknown[], EventRow>(this.db, `${COLUMNS} WHERE position > ?${filter} ORDER BY position LIMIT ?`);
      return statement.all(after.commit, ...(types ?? []), limit).map(toEvent);
    });
  }

  page(options: FeedRead): Promise<FeedPage> {
    const { after, limit, types } = options;
    if (types === undefined) return this.read(options).then((events) => ({ events }));
    return guard(() => {
      const window = `SELECT position, id, type, body FROM events WHERE position > ? ORDER BY position LIMIT ?`;
      const filter = `type IN (${types.map(() => '?').join(', ')})`;
      const rows = prepare<unknown[], EventRow>(this.db, `SELECT * FROM (${window}) WHERE ${filter} ORDER BY position LIMIT ?`).all(
        after.commit,
        this.scanWindow,
        ...types,
        limit,
      );
      if (rows.length === limit) return { events: rows.map(toEvent) };
      // The window ended first: where it ended, when it was full (else the feed ended, and so does the page).
      const end = prepare<[number, number], string>(this.db, 'SELECT id FROM events WHERE position > ? ORDER BY position LIMIT 1 OFFSET ?')
        .pluck()
        .get(after.commit, this.scanWindow - 1);
      return end === undefined ? { events: rows.map(toEvent) } : { events: rows.map(toEvent), examinedTo: end };
    });
  }

  find(id: string): Promise<FeedPosition | undefined> {
    return guard(() => {
      if (id === FEED_START_ID) {
        // Positions count from 1 and retention deletes the oldest first: the first is there until something was deleted.
        const oldest = prepare<[], number | null>(this.db, 'SELECT min(position) FROM events').pluck().get();
        return oldest === null || oldest === 1 ? FEED_START : undefined;
      }
      const position = prepare<[string], number>(this.db, 'SELECT position FROM events WHERE id = ?').pluck().get(id);
      return position === undefined ? undefined : { commit: position, index: 0 };
    });
  }

  holds(after: FeedPosition): Promise<boolean> {
    return guard(() => {
      // Positions count from 1, and retention deletes only the oldest run of events (never the newest: an
      // empty feed has had none).
      const oldest = prepare<[], number | null>(this.db, 'SELECT min(position) FROM events').pluck().get();
      return (oldest ?? 1) <= Math.max(after.commit, 1);
    });
  }

  newest(): Promise<FeedEvent | undefined> {
    return guard(() => {
      const row = prepare<[], EventRow>(this.db, `${COLUMNS} ORDER BY position DESC LIMIT 1`).get();
      return row && toEvent(row);
    });
  }

  async deleteExpired(before: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      const chunk = await this.writer.write({ kind: 'deleteExpiredEvents', before, limit: EXPIRE_CHUNK });
      deleted += chunk;
      if (chunk < EXPIRE_CHUNK) return deleted;
    }
  }

  onRecorded(listener: () => void): void {
    this.writer.onRecorded(listener);
  }
}
