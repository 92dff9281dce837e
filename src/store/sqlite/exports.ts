import { StoreBusyError, type Plant, type PlantExport } from '../store.js';
import { openConnection, prepare, type Connection } from './connection.js';
import { guard, guardSync } from './errors.js';
import { toPlant, type PlantRow } from '../rows.js';

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

  constructor(private readonly path: string) {}

  /** Opens a snapshot to export from, on a borrowed connection. */
  open(tag: string | undefined): Promise<PlantExport> {
    return guard(() => {
      const db = this.borrow();
      try {
        return new SqliteExport(this, db, tag);
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
  private readonly first;
  private readonly next;
  private readonly total;
  private readonly args: string[];
  private released = false;

  constructor(
    private readonly connections: ExportConnections,
    private readonly db: Connection,
    tag: string | undefined,
  ) {
    // A deferred transaction takes its snapshot at its first read: read at once, so that the export is
    // the store as it was when it was asked for.
    db.exec('BEGIN');
    prepare(db, 'SELECT 1 FROM plants LIMIT 1').get();
    const cols = 'SELECT id, name, tag FROM plants';
    this.args = tag === undefined ? [] : [tag];
    const where = tag === undefined ? '' : 'tag = ? AND ';
    this.first = prepare<unknown[], PlantRow<bigint>>(db, `${cols} ${tag === undefined ? '' : 'WHERE tag = ?'} ORDER BY id LIMIT ?`).safeIntegers(
      true,
    );
    this.next = prepare<unknown[], PlantRow<bigint>>(db, `${cols} WHERE ${where}id > ? ORDER BY id LIMIT ?`).safeIntegers(true);
    this.total = prepare<unknown[], number>(db, `SELECT count(*) FROM plants ${tag === undefined ? '' : 'WHERE tag = ?'}`).pluck();
  }

  count(): Promise<number> {
    return guard(() => this.total.get(...this.args)!);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Plant[]> {
    try {
      let rows = guardSync(() => this.first.all(...this.args, EXPORT_CHUNK));
      while (rows.length > 0) {
        yield rows.map(toPlant);
        if (rows.length < EXPORT_CHUNK || this.released) break;
        const last = rows.at(-1)!.id;
        rows = guardSync(() => this.next.all(...this.args, last, EXPORT_CHUNK));
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
