import { StoreBusyError, type ExportOptions, type PlantExport } from '../store.js';
import type { StoredPlant } from '../../model/plant.js';
import { openConnection, prepare, type Connection } from './connection.js';
import { guard, guardSync } from './errors.js';
import { toPlant, type PlantRow } from '../rows.js';
import { countSql, filterParams, listParams, RECENT_SQL, rowsSql, SCAN_WINDOW, scanEndSql } from './list-sql.js';

/** Plants are exported this many at a time, each chunk read from the export's own snapshot. */
const EXPORT_CHUNK = 1000;

/** Exports running at once at most; beyond, an export is refused as busy (503) rather than queued. */
const EXPORTS_AT_ONCE = 8;

/**
 * Read connections for exports, opened when first needed and kept: better-sqlite3's objects must not be
 * left to the garbage collector (connection.ts), so an export borrows one and gives it back.
 */
export class ExportConnections {
  private readonly idle: Connection[] = [];
  private lent = 0;

  constructor(
    private readonly path: string,
    /** SCAN_WINDOW (list-sql.ts); smaller in tests. */
    private readonly scanWindow = SCAN_WINDOW,
  ) {}

  /** Opens a snapshot to export from, on a borrowed connection. */
  open(options: ExportOptions): Promise<PlantExport> {
    return guard(() => {
      const db = this.borrow();
      try {
        return new SqliteExport(this, db, options, this.scanWindow);
      } catch (error) {
        this.giveBack(db);
        throw error;
      }
    });
  }

  private borrow(): Connection {
    if (this.lent >= EXPORTS_AT_ONCE) throw new StoreBusyError(EXPORTS_AT_ONCE, 'exports');
    const db = this.idle.pop() ?? openConnection(this.path, { readonly: true, fileMustExist: true });
    this.lent++;
    return db;
  }

  giveBack(db: Connection): void {
    this.lent--;
    if (db.inTransaction) db.exec('ROLLBACK');
    this.idle.push(db);
  }

  close(): void {
    for (const db of this.idle) if (db.open) db.close();
  }
}

/**
 * An export reads on a connection of its own, in one read transaction (WAL: a snapshot that later
 * commits do not change), a chunk at a time by key, so that the main connection keeps serving and
 * memory stays flat.
 */
class SqliteExport implements PlantExport {
  private released = false;

  constructor(
    private readonly connections: ExportConnections,
    private readonly db: Connection,
    private readonly options: ExportOptions,
    private readonly scanWindow: number,
  ) {
    // A deferred transaction takes its snapshot at its first read: read at once, so that the export is
    // the store as it was when it was asked for.
    db.exec('BEGIN');
    prepare(db, 'SELECT 1 FROM plants LIMIT 1').get();
  }

  /** Whether plants were written after the search index's mark, in the export's snapshot (list-sql.ts). */
  private recent(): boolean {
    return this.options.q !== undefined && prepare<[], number>(this.db, RECENT_SQL).pluck().get() === 1;
  }

  count(): Promise<number> {
    return guard(() => {
      const { shape, params } = filterParams(this.options, { recent: this.recent() });
      return prepare<[Record<string, unknown>], number>(this.db, countSql(shape)).pluck().get(params)!;
    });
  }

  /**
   * A chunk at a time, each starting after the last plant of the one before, as pages do (list-sql.ts),
   * so that memory stays flat and every chunk is a short statement. In the name orders q is found by
   * walking the name index (chunked: the whole export reads each plant once) rather than through the
   * trigram index, whose matches would be sorted again for every chunk.
   */
  async *[Symbol.asyncIterator](): AsyncGenerator<StoredPlant[]> {
    try {
      let after: { id: bigint; name: string } | undefined;
      for (;;) {
        const { rows, scanned } = guardSync(() => {
          const { shape, params } = listParams({ ...this.options, after }, EXPORT_CHUNK, {
            walk: true,
            recent: this.recent(),
            window: this.scanWindow,
          });
          const found = prepare<[Record<string, unknown>], PlantRow<bigint>>(this.db, rowsSql(shape)).safeIntegers(true).all(params);
          // A scan examines SCAN_WINDOW plants per chunk at most: a short chunk goes on after the last one examined.
          const end =
            found.length < EXPORT_CHUNK && shape.q === 'scan'
              ? prepare<[Record<string, unknown>], { id: bigint; name: string }>(this.db, scanEndSql(shape)).safeIntegers(true).get(params)
              : undefined;
          return { rows: found, scanned: end };
        });
        if (rows.length > 0) yield rows.map(toPlant);
        if (this.released) break;
        const last = rows.length === EXPORT_CHUNK ? rows.at(-1)! : scanned;
        if (last === undefined) break;
        after = { id: last.id, name: last.name };
      }
    } finally {
      await this.close();
    }
  }

  close(): Promise<void> {
    if (!this.released) {
      this.released = true;
      this.connections.giveBack(this.db);
    }
    return Promise.resolve();
  }
}
