import { dirname } from 'node:path';
import type { BatchTracing } from '../batcher.js';
import { sqlitePath } from '../database-url.js';
import type { Migrated } from '../migration.js';
import type { BatchCounts, CommitObserver, PlantStore, Store, StoreUnavailableError, TokenStore } from '../store.js';
import { prepare, type Connection, type SqliteConnectionSettings } from './connection.js';
import { accessProblem } from './access.js';
import { guard, translate } from './errors.js';
import { SqliteEvents } from './feed.js';
import { ExportConnections } from './exports.js';
import { migrate } from './migrate.js';
import { SqliteIdempotency } from './idempotency.js';
import { SqliteWrites } from './writes.js';
import { identity, openStoreFile } from './open-file.js';
import { StoreHealth } from './health.js';
import { foreignReservedObject } from './reserved-names.js';
import { createPrivateFile, exposedStoreWarning, makePrivateDir } from './private-files.js';
import { SqlitePlants } from './plants.js';
import { SqliteTokens } from './tokens.js';
import { SqliteWebhooks } from './webhooks.js';
import { SqliteSearchIndex } from './search-index.js';
import { WriteThread } from './writer/thread.js';

/**
 * A store whose file carries an object under SQLite's prefix that SQLite did not make (reserved-names.ts)
 * is not opened: a file put in place by hand is never checked as a restore checks it, and such a trigger
 * would act in every write. Checked before the migrations run, on every open (one read of
 * sqlite_master); the connection is closed first (none is left to the garbage collector).
 */
function refuseForeignReservedObjects(db: Connection): void {
  let foreign: string | undefined;
  try {
    foreign = foreignReservedObject(db);
  } catch (error) {
    db.close();
    throw error;
  }
  if (foreign === undefined) return;
  db.close();
  throw new Error(
    `the file ${foreign}: it was altered outside plant-store, and the object would act in the store; restore a backup (plant-store restore checks every object), or remove the object`,
  );
}

export interface SqliteOptions extends SqliteConnectionSettings {
  /** Writes waiting for the writer thread at most (WRITE_QUEUE_LIMIT). */
  writeQueueLimit?: number;
  /** Told of every committed batch of writes (metrics). */
  onCommit?: CommitObserver | undefined;
  /** Traces the writer thread's commits and the gathered reads (tracing on). */
  tracing?: BatchTracing | undefined;
  /** Plants a scan for q examines per page at most (list-sql.ts SCAN_WINDOW): smaller in tests. */
  scanWindow?: number;
}

const DEFAULT_WRITE_QUEUE_LIMIT = 10_000;

/**
 * The SQLite store: one file, WAL mode. Reads run on the main thread's connection (WAL: they see every
 * committed batch); every write goes through the writer thread (writer/thread.ts), which commits writes
 * that arrive together in one transaction.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly plants: PlantStore;
  private readonly exports: ExportConnections;
  readonly tokens: TokenStore;
  readonly webhooks: SqliteWebhooks;
  readonly warnings: readonly string[];
  readonly migrated: Migrated;
  readonly events: SqliteEvents;
  readonly searchIndex: SqliteSearchIndex;
  readonly writeBatches: Readonly<BatchCounts>;
  readonly writes: SqliteWrites;
  readonly idempotency: SqliteIdempotency;

  private constructor(
    private readonly db: Connection,
    private readonly writer: WriteThread,
    private readonly health: StoreHealth,
    path: string,
    tracing: BatchTracing | undefined,
    warnings: string[],
    scanWindow: number | undefined,
    migrated: Migrated,
  ) {
    this.warnings = warnings;
    this.migrated = migrated;
    this.exports = new ExportConnections(path, scanWindow);
    this.plants = new SqlitePlants(db, writer, this.exports, tracing?.({ system: 'sqlite', operation: 'reads' }), scanWindow);
    this.tokens = new SqliteTokens(db, writer);
    this.webhooks = new SqliteWebhooks(db, writer);
    this.events = new SqliteEvents(db, writer, scanWindow);
    this.searchIndex = new SqliteSearchIndex(db, writer);
    this.writeBatches = writer.batches;
    this.writes = new SqliteWrites(writer);
    this.idempotency = new SqliteIdempotency(db, writer);
  }

  static open(url: string, options: SqliteOptions): SqliteStore {
    const path = sqlitePath(url);
    try {
      makePrivateDir(dirname(path));
      // Said before the file is made private: a store made by an earlier version may be open to others.
      const warnings = [exposedStoreWarning(path)].filter((warning) => warning !== undefined);
      createPrivateFile(path);
      // SQLite opens a file it may not write read-only, without a word, and refuses each write later
      // (SQLITE_READONLY, naming nothing): a store this process cannot write is refused here, by name.
      const readOnly = accessProblem(path, { code: 'EACCES' });
      if (readOnly !== undefined) throw Object.assign(new Error(readOnly), { code: 'EACCES' });
      const db = openStoreFile(path, options);
      // The file open now: no restore can swap it while this connection holds its shared lock (restore.ts).
      const health = new StoreHealth(path, identity(path));
      refuseForeignReservedObjects(db);
      // 16 MB of page cache for reads, said outright: better-sqlite3 builds SQLite with this default
      // (SQLITE_DEFAULT_CACHE_SIZE), where SQLite's own is 2 MB, and keyset pages over a million plants
      // land on random B-tree pages, which a small cache would read from the file again and again.
      db.exec('PRAGMA cache_size = -16000');
      const migrated = migrate(db);
      // The temporary B-trees of reads (sorting the trigram index's matches in a name order) in memory:
      // SQLite's default here keeps each in a temporary file's pager, which made a page several times
      // dearer in CPU (measured in bench/RESULTS.md). Set after migrating, so that building an index over
      // a million plants still spills to disk; reads sort at most COMMON_Q rows (name-order-q.ts), and exports
      // read on connections of their own (exports.ts).
      db.exec('PRAGMA temp_store = MEMORY');
      const writer = new WriteThread(
        { path, synchronous: options.synchronous, busyTimeoutMs: options.busyTimeoutMs },
        health,
        options.writeQueueLimit ?? DEFAULT_WRITE_QUEUE_LIMIT,
        options.onCommit,
        options.tracing?.({ system: 'sqlite', operation: 'commit' }),
      );
      // The search index catches up with what the last run (or a crash) left unindexed, in the background.
      if (prepare(db, "SELECT max(position) > (SELECT value FROM counters WHERE name = 'search_position') FROM events").pluck().get() === 1) {
        writer.wake();
      }
      return new SqliteStore(db, writer, health, path, options.tracing, warnings, options.scanWindow, migrated);
    } catch (error) {
      // A permission refused: the folder or file, and the user who needs it (SQLite's code names neither).
      const problem = accessProblem(path, error);
      throw problem === undefined ? translate(error) : new Error(problem, { cause: error });
    }
  }

  /**
   * Ready: the file is still the one opened, the last batch did not fail as unavailable (or, that failure a
   * second old at least, a write of ping's own commits: readiness comes back with the disk's space even when
   * no write comes; health.ts), and the connection answers.
   */
  async ping(): Promise<void> {
    const gone = this.health.fileRefusal();
    if (gone !== undefined) throw gone;
    const problem = this.health.problem;
    if (problem !== undefined) {
      if (!this.health.probeDue()) throw problem;
      // Commits and clears the problem (writer/thread.ts), or fails as unavailable and throws.
      await this.writer.write({ kind: 'probe' });
    }
    return guard(() => {
      prepare(this.db, 'SELECT 1').get();
    });
  }

  onHealthChange(listener: (problem: StoreUnavailableError | undefined) => void): void {
    this.health.onChange(listener);
  }

  async close(): Promise<void> {
    await this.writer.close();
    this.exports.close();
    if (this.db.open) this.db.close();
  }
}
