import { replayOf, type IdempotencyStore, type Kept, type KeyRow } from '../idempotency.js';
import { prepare, type Connection } from './connection.js';
import { guard } from './errors.js';
import { FIND_KEY, KEPT_SQL } from './writer/idempotency.js';
import type { WriteThread } from './writer/thread.js';

/**
 * The outcomes kept under Idempotency-Keys on SQLite: found and counted on the main thread's connection,
 * swept by the writer thread in its batches (the keyed writes are writes.ts's, kept by writer/idempotency.ts).
 */
export class SqliteIdempotency implements IdempotencyStore {
  private readonly found;
  private readonly kept;

  constructor(
    db: Connection,
    private readonly writer: WriteThread,
  ) {
    this.found = prepare<[string, string, number], KeyRow>(db, FIND_KEY);
    this.kept = prepare<[number], number>(db, KEPT_SQL).pluck();
  }

  find(owner: string, key: string): Promise<Kept | undefined> {
    return guard(() => {
      const row = this.found.get(owner, key, Date.now());
      return row && replayOf(row);
    });
  }

  deleteExpired(limit: number): Promise<number> {
    return this.writer.write({ kind: 'deleteExpiredKeys', limit });
  }

  count(): Promise<number> {
    return guard(() => this.kept.get(Date.now()) ?? 0);
  }
}
