import type { SearchIndex } from '../store.js';
import { prepare, type Connection } from './connection.js';
import { guard } from './errors.js';
import type { WriteThread } from './writer/thread.js';

/**
 * The search index on SQLite, as the main thread sees it: kept by the writer thread after the writes
 * (writer/search-index.ts), it may be a little behind them, which lag() tells (a metric).
 */
export class SqliteSearchIndex implements SearchIndex {
  private readonly lagStmt;

  constructor(
    db: Connection,
    private readonly writer: WriteThread,
  ) {
    this.lagStmt = prepare<[], { events: number; oldest: number | null }>(
      db,
      `SELECT (SELECT coalesce(max(position), 0) FROM events) - m.value AS events,
              (SELECT min(at) FROM events WHERE position > m.value) AS oldest
         FROM counters m WHERE m.name = 'search_position'`,
    );
  }

  lag(): Promise<{ events: number; ms: number }> {
    return guard(() => {
      const { events, oldest } = this.lagStmt.get()!;
      return { events, ms: oldest === null ? 0 : Math.max(0, Date.now() - oldest) };
    });
  }

  onFailure(listener: (message: string) => void): void {
    this.writer.onIndexFailure(listener);
  }

  rebuild(): Promise<number> {
    return this.writer.write({ kind: 'rebuildSearch' });
  }
}
